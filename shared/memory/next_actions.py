"""The `next_action` of every outcome: the spec's texts, followed by the exact call to make with its ids."""

from __future__ import annotations

from shared.memory.models import NextAction

NO_MATCH = "NO_MATCH_DEBUG_THEN_ADD_INCIDENT"
NO_SOLUTIONS = "NO_SOLUTIONS_ADD_ONE"
TRY = "TRY_SOLUTION_AND_RECORD_OUTCOME"
DONE = "DONE_OR_ADD_ENV_VARIANT"
DEBUG_FURTHER = "DEBUG_FURTHER_THEN_ADD_SOLUTION_OR_INCIDENT"
RECORD_NEW = "RECORD_OUTCOME_FOR_NEW_SOLUTION"
USE_ADD_SOLUTION = "USE_ADD_SOLUTION_FOR_EXISTING_INCIDENT"
REVIEW = "REVIEW_INCIDENT"

_TEXT = {
    NO_MATCH: (
        "No relevant incidents found. Debug normally."
        " If a fix is found, call add_incident to store the incident + solution + outcome."
    ),
    NO_SOLUTIONS: (
        "Incidents were found but no solutions exist. Debug normally."
        " Once you find a fix that works, call add_solution for the best matching incident, then record_outcome."
    ),
    TRY: "Try the recommended solution. After attempting it, call record_outcome with worked=true or false.",
    DONE: "Done. If this fix works in another environment, add_solution to the same incident and then record_outcome.",
    DEBUG_FURTHER: (
        "Debug further. If you find a new fix for the same incident, call add_solution (then record_outcome)."
        " If the root cause is different, call add_incident to create a new incident."
    ),
    RECORD_NEW: "If you try this solution, call record_outcome with solution_id, worked, and env.",
    USE_ADD_SOLUTION: (
        "An incident already exists. Use add_solution with this incident_id, then record_outcome after you try it."
    ),
}


def _lookup(lookup_id: str | None) -> str:
    return f', lookup_id="{lookup_id}"' if lookup_id else ""


def no_match(lookup_id: str) -> NextAction:
    return NextAction(type=NO_MATCH, instructions=f'{_TEXT[NO_MATCH]} Pass lookup_id="{lookup_id}" to add_incident.')


def no_solutions(incident_id: str, lookup_id: str) -> NextAction:
    return NextAction(
        type=NO_SOLUTIONS,
        instructions=(
            f"{_TEXT[NO_SOLUTIONS]} Best matching incident:"
            f' add_solution(incident_id="{incident_id}", steps=[...], env=...{_lookup(lookup_id)}).'
        ),
    )


def try_solution(solution_id: str, lookup_id: str, *, proven: bool = True) -> NextAction:
    caveat = "" if proven else " Nobody has recorded an outcome for it yet (unproven): treat it as a suggestion."
    return NextAction(
        type=TRY,
        instructions=(
            f"{_TEXT[TRY]}{caveat}"
            f' Call record_outcome(solution_id="{solution_id}", worked=..., env=...{_lookup(lookup_id)}).'
        ),
    )


def done(incident_id: str) -> NextAction:
    return NextAction(type=DONE, instructions=f'{_TEXT[DONE]} Incident: incident_id="{incident_id}".')


def debug_further(incident_id: str, lookup_id: str | None) -> NextAction:
    return NextAction(
        type=DEBUG_FURTHER,
        instructions=(
            f"{_TEXT[DEBUG_FURTHER]} Same incident:"
            f' add_solution(incident_id="{incident_id}", steps=[...], env=...{_lookup(lookup_id)}).'
        ),
    )


def record_new(solution_id: str, lookup_id: str | None) -> NextAction:
    return NextAction(
        type=RECORD_NEW,
        instructions=(
            f"{_TEXT[RECORD_NEW]}"
            f' Call record_outcome(solution_id="{solution_id}", worked=..., env=...{_lookup(lookup_id)}).'
        ),
    )


def use_add_solution(incident_id: str, lookup_id: str | None) -> NextAction:
    return NextAction(
        type=USE_ADD_SOLUTION,
        instructions=(
            f"{_TEXT[USE_ADD_SOLUTION]}"
            f' Call add_solution(incident_id="{incident_id}", steps=[...], env=...{_lookup(lookup_id)}).'
        ),
    )


def review(incident_id: str, has_solutions: bool) -> NextAction:
    if has_solutions:
        return NextAction(
            type=REVIEW,
            instructions=(
                "Pick the solution whose stats fit your environment;"
                " after trying it call record_outcome(solution_id=..., worked=..., env=...)."
                f' Incident: incident_id="{incident_id}".'
            ),
        )
    return NextAction(
        type=NO_SOLUTIONS,
        instructions=f'{_TEXT[NO_SOLUTIONS]} Call add_solution(incident_id="{incident_id}", steps=[...], env=...).',
    )


def nothing_listed() -> NextAction:
    return NextAction(
        type=NO_MATCH,
        instructions=(
            "No incidents matched. Call ranked_solutions with the error text, or add_incident once you have a fix."
        ),
    )
