/** A copy of `from` in a new array of `length` elements (the rest zero): how the index's typed arrays grow. */
export function grownInt32(from: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const to = new Int32Array(length);
  to.set(from);
  return to;
}
