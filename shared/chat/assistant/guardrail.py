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

from shared.chat.assistant import when

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

# Task evidence: the words of task management and of a person's own to-do list.
_TASK = re.compile(
    r"\b("
    r"tasks?|to-?dos?|to do list|due|overdue|deadlines?|reminders?|priority|priorities|"
    r"pending|completed?|finish(ed)?|done|reopen|workload|backlog|checklist|errands?|agenda|"
    r"tagged|categor(y|ies)|status of (my|the)|"
    r"mark(ed)? .{0,60}\b(done|complete|completed|finished|pending)|"
    r"(add|create|make|new|schedule|note|remember) .{0,40}\b(task|todo|to-do|reminder|to buy|to call|to pay|to email)|"
    r"remind me (to|about|on|at|in|by|tomorrow|today|tonight|next|this|every)\b|"
    r"(add|put) .{0,60}\b(to|on) my (list|tasks)|"
    r"what('?s| is| do i have)? (due|on my (list|plate))|what did i (do|complete|finish|get done)|"
    r"what have i (done|finished|completed|accomplished)|"
    r"(delete|remove|clear|erase) .{0,40}\b(tasks?|todos?|completed|done|finished)|"
    r"(my|the) (list|to-?do)|(still |i )(need|have) to do\b|\bleft to do\b"
    r")\b"
)
# A person's own things to do, said without task words ("I need to call the bank", "don't let me forget ...").
_TODO = re.compile(
    r"\bi (?:still |really |also )?(?:need|have|got|must|should|ought|gotta) to\b|\bi haven'?t (?:done|finished)\b"
    r"|\bdon'?t let me forget\b|\b(?:tick|check|cross)(?:ed)? off\b|\bjot down\b|\bremember to\b"
    r"|^(?:what|which)(?:'s| is)? (?:next|left)\b|\bwhat should i (?:do|work on|focus on|tackle|start with)\b"
    r"|\bhow busy am i\b|\bam i (?:late|behind)\b|\b(?:things|stuff|items) (?:i|to)\b|\bhave left\b"
    r"|\bwhen(?:'s| is| do i)(?: my)?\b.{0,40}\b(?:appointment|meeting|bill|payment|deadline|renewal)\b"
    r"|\bwhen is my\b|^did i\b|\bdo i have (?:anything|something)\b|\b(?:anything|something) (?:about|with|on|for)\b"
    r"|\bmy (?:\w+ )?(?:items|things to do|chores)\b|\bmy (?:day|week|schedule|plate|dates)\b|\bstat(?:s|istics)\b"
    r"|\b(?:the|that) \w+ one\b|\bones\b"
    r"|\b(?:my|set|change|use|update)\b.{0,20}\btime ?zone\b|\bi live in\b"
    # Reporting what one did, forgot or missed, or asking what is ahead: talk about one's own to-dos.
    r"|\bi (?:already |just |finally |have |'ve )?(?:did|done|finished|forgot|forgotten|missed|called|paid|sent|bought"
    r"|booked|cleaned|fixed|emailed|submitted|returned|renewed|picked up)\b|^what did i\b|\banything i\b"
    r"|\bhow am i doing\b|\bcoming up\b|\bupcoming\b|\burgent\b|\b(?:tick|check|cross)(?:ed)?(?: \w+){0,4} off\b"
    r"|\bwhat (?:do|have) i (?:got|have)\b|\b(?:important|pressing|urgent|critical) (?:stuff|things|ones|items)\b"
    r"|^(?:show|list|see|view)(?: me)? (?:everything|all|anything|it all)\b"
    # Verbs of a list: "scratch the gym", "unmark the rent", "snooze it".
    r"|^(?:scratch|unmark|untick|uncheck|ditch|nix|snooze|archive|unarchive|star|unstar|pin|unpin|flag|unflag)"
    r" (?:the|that|this|my|it|them|those)\b"
)
# Words of a person's agenda: a question holding one ("what's for today", "anything pressing?") is about their
# to-dos, not about the world.
_AGENDA = re.compile(
    r"\b(?:outstanding|pressing|left|remaining|urgent|important|overdue|pending|coming|next|planned|scheduled"
    r"|open|upcoming|unfinished|waiting|today|tonight|tomorrow|this (?:morning|afternoon|evening|week|weekend))\b"
)
# A request to add something, in words that start the message ("add buy milk", "new: ...", "put X on ...").
_CREATE_LEAD = re.compile(
    r"^(?:please |pls |can you |could you )?(?:add|new task|new to-?do|create|put|note|schedule|jot down)\b"
)
# Follow-ups of an earlier answer: a yes or no, "the second one", "mark it done", "delete those".
_FOLLOW_UP = re.compile(
    r"^(?:yes|yep|yeah|no|nope|ok|okay|sure|cancel|keep (?:it|them))\b"
    r"|^(?:the )?(?:first|second|third|fourth|fifth|last|other|latter|former) one\b|^#\d+$"
    r"|\b(?:mark|complete|finish|delete|remove|reopen|move|rename|check off|tick off) "
    r"(?:it|them|those|these|both|all of them)\b"
)
# Asking what the assistant can do is a question about tasks (the help text answers it).
_META = re.compile(r"^(?:help|what can you do|how does this work|what are you for|how do i use (?:this|you))[?!. ]*$")
# Reschedule verbs with a date ("move the dentist appointment to next tuesday", "postpone pay rent by a week").
_RESCHEDULE = re.compile(r"^(?:please )?(?:move|push|bump)\b.{1,60}\b(?:to|until|till|by)\b")
# Verbs that only ever reschedule something ("postpone pay rent by a week").
_POSTPONE = re.compile(
    r"^(?:please )?(?:postpone|reschedule|push back|defer)\b"
    # ... or later in the message, on something already named ("I can't make it, reschedule it for monday").
    r"|\b(?:postpone|reschedule|defer) (?:it|them|that|this|those|these)\b"
)
_INJECTION = re.compile(
    r"("
    r"\b(?:print|show|reveal|tell|give|send|leak|dump|list)\b.{0,30}\b(?:api ?keys?|secrets?|access tokens?|"
    r"credentials|connection strings?|env(?:ironment)? variables?)\b|"
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
# Sums ("2+2", "12 x 8"), not dates: a digit or dash next to it makes it part of 2026-12-10.
_ARITHMETIC = r"(?<![\d.-])\d+(?:\.\d+)? ?[-+*/x^] ?\d+(?:\.\d+)?(?![\d-])"
_OFF_TOPIC = re.compile(
    r"\b("
    r"weather|forecast|temperature outside|rain(ing)?|snow(ing)?|sunny|"
    r"jokes?|funny|riddle|poems?|poetry|haiku|limerick|song|lyrics|story|stories|essay|"
    r"news|headlines?|sports?|football|soccer|basketball|baseball|cricket|tennis|game tonight|scores?|"
    r"president|prime minister|election|politic(s|al)|capital of|population of|history of|"
    r"recipes?|cook(ing)?|bake|restaurants?|movies?|film|tv show|netflix|music|celebrity|"
    r"stock|stocks|bitcoin|crypto|exchange rate|invest(ing|ment)?|"
    r"translate|translation|meaning of life|philosophy|synonym|spell|"
    r"how are you|who are you|what('?s| is) your name|are you (a )?(human|robot|ai)|tell me about yourself|"
    r"phone (is )?broken|wifi|laptop|computer (is )?(slow|broken)|printer|install|password|account|browser|"
    r"alarm|timer|stopwatch|instagram|facebook|twitter|tiktok|whatsapp|spotify|youtube|"
    r"python|javascript|code|program(ming)?|sql|regex|"
    r"should i (quit|marry|buy|sell|move|break up)|relationship|dating|advice on my (life|career)|"
    r"diagnos(e|is)|symptoms?|medic(al|ine)|headache|calories|"
    r"math|equation|calculate|square root|derivative|integral|"
    r"near me|nearby|near here|directions|flights?|hotels?|"
    # The clock and the calendar themselves: "what time is it?", "what's today's date?".
    r"what time is it|(?:the|today's) date|what day is (?:it|today)|"
    # Messages on the user's behalf: "text my wife that I'm late".
    r"(?:text|message|email|tell|call|ring) (?:my )?\w+ (?:that|to say|saying)|"
    # Other apps' actions: sending messages, the address book ("send an email to my boss", "text my sister ...").
    r"(?:send|write|shoot) (?:an? )?(?:e-?mail|text|message|sms|dm|whatsapp)|(?:text|e-?mail|message|dm) my \w+|"
    r"contacts?|address book"
    r")\b"
    r"|" + _ARITHMETIC + r"|^add \d+(\.\d+)? (and|to|plus) \d+"
    r"|^(hi|hello|hey|good (morning|evening|afternoon|night)|thanks?( you)?|thx|bye|goodbye|lol|haha)[!. ]*$"
)
# Asking the assistant itself to produce, look up or do something that is not a task.
_ASSISTANT_ACTION = re.compile(
    r"^(?:please |can you |could you |would you |will you )?(?:"
    r"write|compose|draft|generate|sing|translate|convert|calculate|compute|solve|explain|describe|define|"
    r"summari[sz]e|recommend|suggest|plan|book|order|play|open|launch|teach me|tell me|"
    r"show me (?:pictures|photos|images|a picture|a photo|how)|find me|search (?:the web|online|google|the internet)|"
    r"look up (?:the|a|an)\b(?! \w+ (?:task|one|reminder))|give me (?:a |an |some )?(?:ideas?|tips?|quotes?|facts?|"
    r"list|recipes?|jokes?|examples?|directions|advice)|help me (?:with|write|plan|find|choose|decide|pick)|"
    r"make (?:a|an|some|me)\b(?! (?:new )?(?:task|todo|to-do|reminder|note)\b)|"
    r"remind me (?:who|what|how|where|when|why|which|if)\b"
    r")\b"
)
# The assistant asked to make or get something for the user ("make me a sandwich", "a workout plan for me").
_FOR_ME = re.compile(r"\b(?:make|get|find|book|buy|order|bring|give|send|create|plan|write) me\b|\bfor me\b")
# A question (wh-word or auxiliary first, or a question mark) that is about the world, not the user's own things.
_QUESTION = re.compile(
    r"^(?:what|what's|whats|who|who's|where|where's|when|when's|why|how|which|is|are|was|were|do|does|did|can|"
    r"could|would|will|should|shall|has|have)\b|\?$"
)
FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|mine)\b")
# Questions about the user that are still not about tasks: advice, how-to, feelings.
_PERSONAL_OFF = re.compile(
    r"\bshould i\b|^how (?:do|can|should|would) i\b|^where (?:is|are|can i|do i)\b|\bcan you help me\b"
    r"|^i(?:'m| am) (?:so |really |very )?(?:bored|sad|tired|happy|lonely|hungry|stressed|angry|excited|sick)\b"
    r"|^i feel\b"
)
# Creative work about tasks is still creative work ("write a haiku about my to-do list").
# A task request of its own inside a message ("tell me a joke and then list my pending tasks"): the message is
# mixed, not creative work about tasks.
_TASK_REQUEST = re.compile(
    r"\b(?:list|show|add|create|delete|remove|mark|complete|find|search|count)\b.{0,30}\b(?:tasks?|to-?dos?)\b"
)
_CREATIVE = re.compile(
    r"^(?:please |can you |could you )?(?:write|compose|draft|generate|sing|make up|tell)\b.{0,40}"
    r"\b(?:poem|haiku|song|story|essay|letter|tweet|speech|joke|limerick|rap|script)\b"
)
# Clearly another topic even next to task words: a mixed message gets its task part and a short decline.
_OFF_STRONG = re.compile(
    r"\b(weather|forecast|jokes?|poems?|haiku|song lyrics|news|headlines|sports? scores?|president|"
    r"prime minister|capital of|recipe|stock price|bitcoin|translate|how are you|meaning of life)\b"
    r"|" + _ARITHMETIC
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
    """The guardrail's verdict for one user message (pure).

    In order: an injection attempt; creative work (even about tasks); task evidence (task words, the
    user's own to-dos, an add request, a follow-up, asking for help); off-topic evidence (topics, asking
    the assistant to make or look up something, a question about the world, personal advice or feelings);
    a to-do written with a date ("pay rent on friday") counts as a task; anything else is unclear.
    """
    text = _spelled(" ".join(message.lower().replace("\u2019", "'").split()).strip())
    if _INJECTION.search(text):
        return Verdict("injection", reason="asks the assistant to change its rules or reach beyond your tasks")
    if _CREATIVE.search(text) and not _TASK_REQUEST.search(text):
        return Verdict("off_topic", reason="asks for creative writing")
    if _is_task(text):
        mixed = bool(_OFF_STRONG.search(text))
        return Verdict("task", mixed=mixed, reason="mentions your tasks" + (" and something else" if mixed else ""))
    if _is_off_topic(text, message):
        return Verdict("off_topic", reason="not about your tasks")
    if _dated_to_do(text):
        return Verdict("task", reason="a thing to do with a date")
    if _QUESTION.search(text) and _AGENDA.search(text):
        return Verdict("task", reason="asks about your agenda")
    return Verdict("unclear", reason="no task words")


# Long task words typed with one slip ("priorty", "evrything", "overdeu"): read as the word. Only words of 7+
# letters, whose one-letter neighbours are not other English words a message would use.
_LONG_TASK_WORDS = ("everything", "priority", "priorities", "overdue", "reminder", "reminders", "deadline",
                    "deadlines", "tomorrow", "completed", "finished", "schedule", "reschedule", "postpone")  # fmt: skip
_WORD = re.compile(r"[a-z]{6,14}")


def _spelled(text: str) -> str:
    """The message with long task words' one-letter slips mended (a deletion, insertion, change or swap)."""
    return _WORD.sub(lambda m: _mended(m.group(0)), text)


def _mended(word: str) -> str:
    if word in _LONG_TASK_WORDS:
        return word
    return next((w for w in _LONG_TASK_WORDS if abs(len(w) - len(word)) <= 1 and _one_slip(word, w)), word)


def _one_slip(a: str, b: str) -> bool:
    """True when `a` becomes `b` by one deleted, inserted, changed or swapped letter."""
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])  # fmt: skip
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1 :]


def _is_task(text: str) -> bool:
    if (
        _TASK.search(text)
        or _TODO.search(text)
        or _FOLLOW_UP.search(text)
        or _META.search(text)
        or _POSTPONE.search(text)
    ):
        return True
    # "add 2 and 3", "add my dentist to my contacts": an add that is not a to-do.
    not_a_todo = re.search(_ARITHMETIC + r"|^add \d|\b(?:to|in|into) (?:my |the )?(?:contacts|address book)\b", text)
    if _CREATE_LEAD.search(text) and not _FOR_ME.search(text) and not not_a_todo:
        return True
    dated = when.find(text.rstrip("?!. "))
    return dated is not None and bool(_RESCHEDULE.search(text) or re.match(r"^(?:and |so )?what about\b", text))


def _is_off_topic(text: str, original: str = "") -> bool:
    """Evidence of another topic: a topic word, asking the assistant to make or look up something, personal
    advice or feelings, a question naming something in the world (a capitalised name), or a question about
    neither the user nor their agenda ("what time is it?", "how tall is mount everest?")."""
    if _OFF_TOPIC.search(text) or _OFF_STRONG.search(text) or _ASSISTANT_ACTION.search(text):
        return True
    if _FOR_ME.search(text) or _PERSONAL_OFF.search(text):
        return True
    if not _QUESTION.search(text):
        return False
    if _NAME.search(original):
        return True
    return not FIRST_PERSON.search(text) and not _AGENDA.search(text)


# A capitalised word after the first one (not "I"): a name of something in the world ("Christmas", "New York").
_NAME = re.compile(r"(?<=[a-z,]) (?!I\b|I'|I\u2019)[A-Z][a-z]+")


def _dated_to_do(text: str) -> bool:
    """A short statement with a date that starts like an instruction ("pay rent on friday", "call mom tomorrow")."""
    found = when.find(text.rstrip("!. "))
    if found is None or "?" in text:
        return False
    rest = found.cut(text.rstrip("!. "))
    first = rest.split(" ", 1)[0] if rest else ""
    return bool(first) and first not in NOT_A_VERB and len(rest.split()) <= 12


# Words that cannot start an instruction: "I feel sad today" or "the game tonight" are not things to do.
NOT_A_VERB = frozenset(
    "i i'm im me my you your we our they it it's its he she the a an this that these those there here what "
    "what's whats who where when why how which is are was were do does did can could would will should shall "
    "hi hello hey thanks thank ok okay yes no lol so and but or if".split()
)


def is_greeting(message: str) -> bool:
    return bool(_GREETING.match(" ".join(message.lower().split())))
