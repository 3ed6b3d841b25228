// Hand-written connective material shared by every area: slot values, openers,
// closers, filler sentences and title shapes. Slots: {service} {env} {team} {n}
// {version} {activity} {day} {label} (the area's label).
import { area } from "./dsl.ts";

export const SLOTS: Record<string, string[]> = {
  service: ["billing-api", "ingest-worker", "search-indexer", "auth-gateway", "report-builder", "notifications", "checkout", "media-resizer", "event-collector", "scheduler", "ledger", "export-service"],
  env: ["staging", "production", "CI", "the dev cluster", "the load-test environment", "a developer laptop", "the canary hosts"],
  team: ["payments", "platform", "data", "growth", "infra", "search", "mobile"],
  n: ["2", "3", "4", "5", "8", "12", "15", "20", "30", "40", "50", "64", "90", "120", "200", "300", "500"],
  version: ["12", "14", "15", "16", "3.2", "1.29", "2.4"],
  activity: ["the Friday deploy", "a load test", "the data migration", "an on-call shift", "the dependency upgrade", "onboarding a new service", "the incident review", "the quarterly failover drill", "a cost review"],
  day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
};

export const OPENERS = [
  "Ran into this during {activity} on {env}.",
  "Writing this down because it cost me most of an afternoon.",
  "Context: the {service} on {env}, owned by the {team} team.",
  "This bit us again on {day}, so here is the full story.",
  "Noting this for the next agent who touches the {service}.",
  "Short version first, details below.",
  "Seen on {env} after {activity}.",
  "Another one from the {team} backlog.",
  "I was asked to look into this after {activity}.",
  "Found while cleaning up alerts for the {service}.",
  "Reproduced it locally before writing this up.",
  "Second time this month, so it deserves a note.",
];

export const CLOSERS = [
  "Verified by running the job {n} times without a failure.",
  "Leaving this here for whoever hits it next.",
  "Follow-up ticket filed to add a regression test.",
  "No further incidents since the change went out.",
  "If this comes back, check the dashboard for the {service} first.",
  "Added a line to the runbook as well.",
  "Took about {n} minutes once we knew where to look.",
  "The fix is deployed to {env}; production follows next week.",
  "Ping the {team} team if any of this looks wrong.",
];

/** Neutral sentences that pad notes the way real write-ups wander. */
export const FILLERS = [
  "We had a short discussion about whether this should be configurable.",
  "The dashboards did not make this obvious at first.",
  "It is worth checking the release notes before upgrading next time.",
  "Nothing else in the incident timeline looked related.",
  "The on-call engineer escalated after about twenty minutes.",
  "I compared the behaviour with an older build to rule out a regression.",
  "The first hypothesis turned out to be wrong, which cost some time.",
  "We agreed to revisit the defaults after the next release.",
  "A colleague pointed out a similar report in the issue tracker.",
  "The logs were noisy, so filtering by request id helped a lot.",
  "Most of the time went into reproducing the problem reliably.",
  "There is probably a cleaner long-term fix, but this one is safe.",
  "The change is small and easy to revert if needed.",
  "We should document the expected behaviour in the README.",
  "Traffic was normal for a weekday when this started.",
  "Staging did not show the problem because its data set is tiny.",
  "Load was around {n} requests per second at the time.",
  "The team decided not to block the release on this.",
  "The same pattern exists in two other services that have not failed yet.",
  "It was not obvious from the error message alone.",
  "Rolling back was considered but not needed in the end.",
  "Metrics for the {service} were attached to the incident ticket.",
  "I left the debug logging on for another day to be sure.",
  "The vendor documentation mentions this only in a footnote.",
  "We checked the last {n} deploys for related changes.",
];

export const VAGUE_TITLES = [
  "Strange {label} failure during {activity}",
  "Gotcha of the day: {label} on {env}",
  "Note to self about {label} in the {service}",
  "Today's {label} surprise and what fixed it",
  "Postmortem notes: {label} problem on {env}",
  "Weird behaviour in the {service} after {activity}",
  "Quick {label} fix worth remembering for later",
];

export const OPEN_LINES = [
  "Not solved yet; writing down what I know so far.",
  "Still investigating. Restarting the service makes it go away for a while.",
  "No root cause yet. Anyone who has seen this before, please add a comment.",
  "Workaround for now is to retry by hand; a real fix is pending.",
];

export const DIGEST_TITLES = [
  "Session log: {label} issues fixed on {day}",
  "Things I learned about {label} this week",
  "Handover notes for the {service}, {label} edition",
  "{label} grab bag from {activity}",
  "On-call summary for {day}: {label} problems",
  "Short {label} lessons from {activity}",
];

export const DIGEST_INTROS = [
  "A few unrelated items from today, each with the short fix:",
  "Summary of what broke and what we did about it:",
  "Handover list, roughly in the order they happened:",
  "Small problems worth knowing about, one line each:",
];

export const TIP_OPENERS = ["TIL:", "Quick tip:", "Reminder:", "Short one:", "For future reference:"];

export const GENERIC_TAGS = [
  "til", "gotcha", "debugging", "incident", "postmortem", "runbook", "howto", "config", "prod", "staging",
  "ci", "perf", "reliability", "dx", "upgrade", "migration", "oncall", "checklist", "workaround", "investigation",
  "latency", "timeouts", "scaling", "cleanup", "tooling", "local-dev", "docs", "rollout", "canary", "rollback",
  "alerts", "capacity", "backups", "cost", "logging", "regression", "flaky", "hotfix", "tech-debt", "followup",
  "q3", "q4", "needs-review", "wontfix", "solved", "open-question", "lessons", "infra-as-code", "vendor", "legacy",
];

/** An area of notes with no judged topics: planning, process and team notes. */
export const MISC = area("misc", "team process", "process", {
  bg: [
    "Planning notes for the {team} roadmap review",
    "Retro notes from the {team} team on {day}",
    "Decision record: ownership of the {service}",
    "Meeting notes: release process changes for {env}",
    "Onboarding checklist for new members of {team}",
    "Weekly status update from the {team} team",
  ],
  facts: [
    "Every service has one owning team listed in the service catalogue.",
    "Releases go out on weekdays before 15:00 so someone is around to watch them.",
    "Incidents get a blameless review within five working days.",
    "We track toil in a shared spreadsheet and pick one item per sprint.",
    "New joiners pair with an experienced engineer for their first on-call week.",
    "Design documents are reviewed asynchronously for three days before the meeting.",
    "Feature flags are removed within two sprints after full rollout.",
    "The error budget policy freezes risky changes when the budget is spent.",
    "We prefer boring technology unless there is a measured reason not to.",
    "Each quarter we retire at least one unused internal tool.",
    "Cost reviews happen monthly with the finance partner.",
    "Runbooks live next to the code and are reviewed like code.",
    "Support escalations go through the triage rotation, not direct messages.",
    "Deprecations are announced at least one release ahead.",
  ],
}, []);

/** Lines of an incident timeline in long write-ups. */
export const TIMELINE = [
  "{n} minutes in: first alert for the {service} fired.",
  "On-call acknowledged and opened the dashboards.",
  "Error rate on {env} peaked; customers started reporting problems.",
  "Rolled the latest deploy back as a precaution; no change.",
  "Found the first useful log line after filtering by request id.",
  "Reproduced the failure on a copy of the data.",
  "Applied the fix to one instance and watched it for {n} minutes.",
  "Rolled the fix out everywhere.",
  "Error rate back to baseline; incident closed.",
  "Wrote this note and filed follow-up tickets.",
  "Paged the {team} team for a second pair of eyes.",
  "Confirmed the problem was limited to {env}.",
];

export const LESSONS = [
  "Alert on the symptom users feel, not only on the cause we found this time.",
  "Keep a minimal reproduction script next to the runbook.",
  "Defaults that work on a laptop rarely survive production load.",
  "Write down the exact error text; it is what the next person will search for.",
  "A small config change with a comment beats a clever workaround.",
  "Test the failure path, not only the happy path.",
  "When two things changed at once, undo one at a time.",
  "Add the check to CI so the same mistake cannot merge again.",
  "Document the limit and the reason for it where the setting lives.",
  "Capture metrics before and after the fix so the effect is measurable.",
];
