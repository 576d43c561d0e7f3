/** Compile-time assertions of the type tests (never run). */

/** True when A and B are assignable both ways. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** `expectType<T>()(value)` compiles only when `value`'s type is T (assignable both ways). */
export declare function expectType<T> (): <U>(value: U, ...exact: Same<T, U> extends true ? [] : [never]) => void

/** Marks values as used, for assignments that only prove a type. */
export declare function use (...values: unknown[]): void
