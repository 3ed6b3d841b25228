// The shape of the hand-written topic material the judged corpus is built from.
// Strings may hold slots like {service}, {env}, {n}; see generic.ts.

export interface Topic {
  /** Stable key: notes about this topic are keyed `<key>/<i>`; queries.json grades topics by it. */
  key: string;
  area: string;
  /** Topic tags (the area tag is added by the generator). */
  tags: string[];
  /** A short noun phrase other notes use when they mention the topic in passing. */
  name: string;
  /** Titles, 5-12 words. */
  ti: string[];
  /** Symptoms (often with the error text), causes, fixes: one sentence or short paragraph each. */
  sy: string[];
  ca: string[];
  fx: string[];
  /** Code, commands or log excerpts. */
  sn?: string[];
  /** One line (symptom → fix) used as a bullet in digest notes. */
  gi: string;
}

export interface Area {
  key: string;
  label: string;
  tag: string;
  /** Titles of general notes about the area, 5-12 words. */
  bg: string[];
  /**
   * General sentences about the area. A sentence starting with `[topic-key] `
   * is about that topic: a note quoting it counts as partially relevant to it.
   */
  facts: string[];
  topics: Topic[];
}

type TopicFields = Omit<Topic, "key" | "area" | "tags">;

export function topic(key: string, tags: string, fields: TopicFields): Omit<Topic, "area"> {
  return { key, tags: tags.split(" ").filter(Boolean), ...fields };
}

export function area(
  key: string,
  label: string,
  tag: string,
  general: { bg: string[]; facts: string[] },
  topics: Omit<Topic, "area">[],
): Area {
  return { key, label, tag, ...general, topics: topics.map((t) => ({ ...t, area: key })) };
}
