import type { VoteValue } from "../store/types.ts";

export type VoteDirection = "up" | "down" | "none";

export const VOTE_DIRECTIONS: readonly VoteDirection[] = ["up", "down", "none"];

export function voteValue(direction: VoteDirection): VoteValue {
  return direction === "up" ? 1 : direction === "down" ? -1 : 0;
}

export function voteDirection(value: VoteValue): VoteDirection {
  return value === 1 ? "up" : value === -1 ? "down" : "none";
}
