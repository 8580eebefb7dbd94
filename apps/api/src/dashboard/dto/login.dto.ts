import { IsStringOfLength } from '../../queues/dto/validators';

/** Body of POST /dashboard/session. */
export class LoginDto {
  @IsStringOfLength(1, 1024)
  readonly token!: string;
}
