/** Imported first by each entry point, before anything that imports '@app/echomq'. */
import { registerPathAliases } from './paths';

registerPathAliases();
