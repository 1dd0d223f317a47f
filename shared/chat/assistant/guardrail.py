"""The assistant's guardrail: is a message about the user's tasks, off-topic, or an attempt to steer the assistant?

Pure and cheap (regular expressions over the lower-cased text), run on every message before anything
else. What it is sure about is answered without a model: an injection attempt or a clearly off-topic
request gets the polite refusal of the spec. A message with task words is on-topic even when it also
asks for something else ("what's the weather and show my tasks"): the task part is served and the rest
declined. Everything else is `unclear`: the LLM (whose own prompt carries the same rules) decides, or,
without one, the assistant says what it can do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["task", "off_topic", "injection", "unclear"]

REFUSAL = (
    "I'm a task management assistant and can only help you with tasks. I can help you:\n"
    "- Create, view, edit, or delete tasks\n"
    "- Search and filter tasks\n"
    "- View task statistics and summaries\n"
    "- Mark tasks as complete\n\n"
    "Please ask me something about your tasks!"
)
DECLINE_REST = "(I can only help with your tasks, so I left the rest of your message aside.)"

_TASK = re.compile(
    r"\b("
    r"tasks?|to-?dos?|to do list|due|overdue|deadlines?|remind(er|ers)?|priority|priorities|"
    r"pending|completed?|finish(ed)?|done|reopen|workload|backlog|checklist|errands?|"
    r"mark(ed)? .{0,60}\b(done|complete|completed|finished|pending)|"
    r"(add|create|make|new|schedule|note|remember) .{0,40}\b(task|todo|to-do|reminder|to buy|to call|to pay|to email)|"
    r"remind me|(add|put) .{0,60}\b(to|on) my (list|tasks)|"
    r"what('?s| is| do i have)? (due|on my (list|plate))|what did i (do|complete|finish|get done)|"
    r"(delete|remove|clear|erase) .{0,40}\b(tasks?|todos?|completed|done|finished)|"
    r"(my|the) (list|to-?do)|time ?zone|(still |i )(need|have) to do\b|\bleft to do\b"
    r")\b"
)
_INJECTION = re.compile(
    r"("
    r"ignore (all |any |the |your )?(previous|prior|above|earlier|preceding|system)? ?"
    r"(instructions|rules|prompts?|guardrails)|"
    r"disregard (all |any |the |your )?(previous|prior|above|earlier)? ?(instructions|rules)|"
    r"forget (all |your |the )?(previous |prior )?(instructions|rules)|"
    r"\bignore\b.{0,30}\b(rules|instructions|guardrails|restrictions)\b|\buser ?ids? #?\w+|"
    r"\byou are now\b|\bfrom now on you\b|\bact as\b|\bpretend (to be|you)\b|\broleplay\b|"
    r"\bsystem prompt\b|\bdeveloper mode\b|\bjailbreak|\bdan mode\b|"
    r"(reveal|show|print|repeat|leak) (me )?(your|the) (system |hidden |original )?(prompt|instructions|rules)|"
    r"\b(other|another|every|all|someone else'?s?) (users?|people|accounts?|workspaces?)('s?)?\b|"
    r"\b(user_id|userid|owner_key)\b|(tasks|data|list|chats?) of (user|alice|bob|everyone)\b|"
    r"\b(everyone|everybody|anyone|someone|somebody) else\b|\bother people\b|"
    r"\b(?!(my|your|today|tomorrow|yesterday|week|month|year|this|next|last|everyone)'s\b)"
    r"[a-z]+'s (tasks|list|to-?dos?)\b|"
    r"</?(system|assistant|tool)>|\[/?inst\]|<\|im_(start|end)\|>"
    r")"
)
_OFF_TOPIC = re.compile(
    r"\b("
    r"weather|forecast|temperature outside|rain(ing)?|snow(ing)?|sunny|"
    r"jokes?|funny|riddle|poems?|poetry|haiku|limerick|song|lyrics|story|stories|essay|"
    r"news|headlines?|sports?|football|soccer|basketball|baseball|cricket|tennis|game tonight|"
    r"president|prime minister|election|politic(s|al)|capital of|population of|history of|"
    r"recipe|cook(ing)?|bake|restaurant|movie|film|tv show|netflix|music|celebrity|"
    r"stock|stocks|bitcoin|crypto|exchange rate|invest(ing|ment)?|"
    r"translate|translation|meaning of life|philosophy|"
    r"how are you|who are you|what('?s| is) your name|are you (a )?(human|robot|ai)|tell me about yourself|"
    r"phone (is )?broken|wifi|laptop|computer (is )?(slow|broken)|printer|install|"
    r"python|javascript|code|program(ming)?|sql|regex|"
    r"should i (quit|marry|buy|sell|move|break up)|relationship|dating|advice on my (life|career)|"
    r"diagnos(e|is)|symptoms?|medic(al|ine)|"
    r"math|equation|calculate|square root|derivative|integral"
    r")\b"
    r"|\b\d+(\.\d+)? ?[-+*/x^] ?\d+(\.\d+)?\b"
    r"|^(hi|hello|hey|good (morning|evening|afternoon)|thanks?( you)?|thx)[!. ]*$"
    r"|^(what|who|where|when|why|how) (is|are|was|were|did|does) (the |a |an )?(?!.*\b(task|due|todo)\b)"
)
# Clearly another topic even next to task words: a mixed message gets its task part and a short decline.
_OFF_STRONG = re.compile(
    r"\b(weather|forecast|jokes?|poems?|haiku|song lyrics|news|headlines|sports? scores?|president|"
    r"prime minister|capital of|recipe|stock price|bitcoin|translate|how are you|meaning of life)\b"
    r"|\b\d+(\.\d+)? ?[-+*/^] ?\d+(\.\d+)?\b"
)
_GREETING = re.compile(r"^(hi|hello|hey|good (morning|evening|afternoon))[!. ]*$")


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    # On-topic messages that also ask for something else: serve the task part, decline the rest.
    mixed: bool = False
    reason: str = ""

    @property
    def refuse(self) -> bool:
        return self.kind in ("off_topic", "injection")


def classify(message: str) -> Verdict:
    """The guardrail's verdict for one user message (pure)."""
    text = " ".join(message.lower().split())
    if _INJECTION.search(text):
        return Verdict("injection", reason="asks the assistant to change its rules or reach beyond your tasks")
    if _TASK.search(text):
        mixed = bool(_OFF_STRONG.search(text))
        return Verdict("task", mixed=mixed, reason="mentions your tasks" + (" and something else" if mixed else ""))
    if _OFF_TOPIC.search(text) or _OFF_STRONG.search(text):
        return Verdict("off_topic", reason="not about your tasks")
    return Verdict("unclear", reason="no task words")


def is_greeting(message: str) -> bool:
    return bool(_GREETING.match(" ".join(message.lower().split())))
