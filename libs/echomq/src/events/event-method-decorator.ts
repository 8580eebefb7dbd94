/**
 * A method decorator that accepts only a method whose first parameter can take an E.
 * The payload types use `never` where a listener chooses the type (a result, progress,
 * a job's data): `never` is assignable to anything, so `(event: CompletedEvent<Sent>)`
 * compiles, while a method declared for another event's payload does not.
 */
export type EventMethodDecorator<E> = <M extends (event: E) => unknown>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;
