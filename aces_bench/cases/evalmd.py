"""``EVAL.md``: the skill author's evaluation intent, in plain markdown.

Convention (parsed with markdown-it-py; section names are case-insensitive):

    # Anything (title and introduction are ignored)

    ## Questions
    - Which invoices in data/march.csv were never paid?
      - id: unpaid-march            (optional; default intent-<n>)
      - kind: implicit              (explicit, implicit, contextual, negative, error_path, ...)
      - expected: INV-1018 and INV-1034
      - file: evals/files/march.csv (repeatable)
      - behavior: runs scripts/reconcile.py (repeatable)
      - assertion: names both invoices (repeatable)
      - credential: SERVICE_TOKEN   (repeatable)
      - skill: none                 (marks a negative control)

    ## Behaviors
    - reads SKILL.md before running any script   (applies to every case that expects the skill)

    ## Must never do
    - deletes or rewrites the input file          (a behavior "must never: ..." on every case that expects the skill)

    ## Should trigger
    - reconcile the march invoices against the bank export   (a trigger query, and a case expecting the skill)

    ## Should not trigger                          (also: "Negative Cases", SkillEvaluator's heading)
    - what is the VAT rate in Portugal?           (a trigger query, and a negative control)

    ## Notes
    Free text for whoever (or whatever) writes more cases.

"Must do" is another name for Behaviors. Any other section (SkillEvaluator's EVAL.md is
free-form around its headings) is kept as notes; one that looks like a misspelt known
section is an error. The file, at the skill's root or in ``evals/``, is the author's:
aces-bench reads it at run time and by ``dataset create`` and never writes it. Its
questions and trigger queries become cases ahead of anything generated, and its
behaviors come first in every generated or refined ``expected_behavior``.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aces_bench.cases.model import CASE_KINDS, EvalCase
from aces_bench.cases.safety import read_asset_text
from aces_bench.core.errors import EvalsError, validation_lines

EVAL_MD = "EVAL.md"
EVAL_MD_FILES = ("EVAL.md", "evals/EVAL.md")  # the skill's root, or SkillEvaluator's place

SECTIONS = {
    "questions": "questions", "behaviors": "behaviors", "behaviours": "behaviors", "must do": "behaviors",
    "expected behaviors": "behaviors", "expected behaviours": "behaviors",
    "must never do": "never", "must not do": "never", "never": "never", "must never": "never",
    "should trigger": "trigger", "when to trigger": "trigger", "triggers": "trigger", "trigger": "trigger",
    "should not trigger": "no_trigger", "when not to trigger": "no_trigger", "negative cases": "no_trigger",
    "notes": "notes",
}
NEVER_PREFIX = "must never: "
_KEYS = {
    "id": "id", "kind": "kind", "expected": "expected", "ground truth": "expected", "ground_truth": "expected",
    "file": "files", "files": "files", "behavior": "behaviors", "behaviour": "behaviors",
    "assertion": "assertions", "credential": "credentials", "credentials": "credentials", "skill": "skill",
}
_REPEATABLE = {"files", "behaviors", "assertions", "credentials"}
_NO_SKILL = {"none", "null", "no", "-"}


class IntentQuestion(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt: str
    line: int
    id: str | None = None
    kind: str | None = None
    expected: str | None = None
    files: list[str] = Field(default_factory=list)
    behaviors: list[str] = Field(default_factory=list)
    assertions: list[str] = Field(default_factory=list)
    credentials: list[str] = Field(default_factory=list)
    negative: bool = False


class EvalIntent(BaseModel):
    """What EVAL.md says: questions to ask, behaviors to expect, notes."""

    model_config = ConfigDict(frozen=True)

    questions: list[IntentQuestion] = Field(default_factory=list)
    behaviors: list[str] = Field(default_factory=list)
    never: list[str] = Field(default_factory=list, description="what the skill must never do")
    trigger: list[str] = Field(default_factory=list, description="queries that should activate the skill")
    no_trigger: list[str] = Field(default_factory=list, description="queries that should not activate it")
    notes: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.questions or self.behaviors or self.never or self.trigger or self.no_trigger or self.notes)

    @property
    def directives(self) -> list[str]:
        """Every behavior a case expecting the skill must show: must-do, then must-never."""
        return list(self.behaviors) + [NEVER_PREFIX + n for n in self.never]


def _line(node: SyntaxTreeNode) -> int:
    return node.map[0] + 1 if node.map else 0


def _own_inline(node: SyntaxTreeNode) -> str:
    """The raw markdown of a paragraph or heading (what the author typed)."""
    return " ".join(c.content for c in node.children if c.type == "inline").strip()


def _inline_text(node: SyntaxTreeNode) -> str:
    """The raw markdown of a list item's first paragraph."""
    for child in node.children:
        if child.type == "paragraph":
            return _own_inline(child)
    return ""


def _sub_items(item: SyntaxTreeNode) -> list[SyntaxTreeNode]:
    return [li for child in item.children if child.type in ("bullet_list", "ordered_list") for li in child.children]


def _question(item: SyntaxTreeNode, n: int, path: Path) -> IntentQuestion:
    prompt = _inline_text(item)
    where = f"{path}:{_line(item)}"
    if not prompt:
        raise EvalsError(f"question {n} has no text", where=where, fix="write the question on the list item's first line")
    fields: dict[str, object] = {"prompt": prompt, "line": _line(item)}
    for sub in _sub_items(item):
        text = _inline_text(sub)
        key, sep, value = text.partition(":")
        name = _KEYS.get(key.strip().lower().strip("*_` "))
        if not sep or name is None:
            raise EvalsError(
                f"question {n}: sub-item {text!r} is not 'key: value' with a known key",
                where=f"{path}:{_line(sub)}",
                fix="use one of: id, kind, expected, file, behavior, assertion, credential, skill",
            )
        value = value.strip()
        if name in _REPEATABLE:
            fields.setdefault(name, [])
            fields[name].append(value)  # type: ignore[union-attr]
        elif name == "skill":
            fields["negative"] = value.lower() in _NO_SKILL
        elif name in fields:
            raise EvalsError(f"question {n}: {key.strip()!r} is given twice", where=f"{path}:{_line(sub)}", fix="keep one")
        else:
            fields[name] = value
    kind = fields.get("kind")
    if kind is not None and kind not in CASE_KINDS:
        raise EvalsError(
            f"question {n}: unknown kind {kind!r}", where=where, fix=f"use one of: {', '.join(CASE_KINDS)}"
        )
    return IntentQuestion.model_validate(fields)


def _section_texts(nodes: list[SyntaxTreeNode]) -> list[str]:
    out = []
    for node in nodes:
        if node.type in ("bullet_list", "ordered_list"):
            out += [t for t in (_inline_text(li) for li in node.children) if t]
        elif node.type == "paragraph":
            out.append(_own_inline(node))
        elif node.type == "heading":
            out.append(_own_inline(node))
        elif node.type in ("fence", "code_block"):
            out.append(node.content.rstrip("\n"))
    return [t for t in out if t]


def parse_eval_md(text: str, path: Path) -> EvalIntent:
    """Parse EVAL.md; a misspelled section or sub-item key is an error naming its line."""
    root = SyntaxTreeNode(MarkdownIt("commonmark").parse(text))
    sections: dict[str, list[SyntaxTreeNode]] = {}
    current: str | None = None
    for node in root.children:
        if node.type == "heading" and node.tag == "h2":
            title = _own_inline(node)
            key = " ".join(title.lower().replace("_", " ").replace("-", " ").split()).rstrip(":")
            current = SECTIONS.get(key)
            if current is None:
                close = difflib.get_close_matches(key, list(SECTIONS), 1, cutoff=0.8)
                if close:
                    raise EvalsError(
                        f"unknown section '## {title}' (did you mean '## {close[0].title()}'?)",
                        where=f"{path}:{_line(node)}",
                        fix="use the sections '## Questions', '## Behaviors', '## Must never do', "
                        "'## Should trigger', '## Should not trigger' and '## Notes'",
                    )
                current = "notes"  # free-form context, kept for whoever writes more cases
                sections.setdefault(current, []).append(node)
                continue
            sections.setdefault(current, [])
            continue
        if node.type == "heading" and node.tag == "h1":
            current = None
            continue
        if current is not None:
            sections[current].append(node)
    # Questions are numbered in file order, across every list in the section.
    questions: list[IntentQuestion] = []
    for node in sections.get("questions", []):
        if node.type in ("bullet_list", "ordered_list"):
            for item in node.children:
                questions.append(_question(item, len(questions) + 1, path))
    return EvalIntent(
        questions=questions,
        behaviors=_section_texts(sections.get("behaviors", [])),
        never=_section_texts(sections.get("never", [])),
        trigger=_section_texts(sections.get("trigger", [])),
        no_trigger=_section_texts(sections.get("no_trigger", [])),
        notes=_section_texts(sections.get("notes", [])),
    )


def intent_cases(intent: EvalIntent, skill_name: str, path: Path) -> list[EvalCase]:
    """The cases EVAL.md's questions describe (``source: eval_md``), in file order."""
    cases = []
    for n, q in enumerate(intent.questions, 1):
        behaviors = ([] if q.negative else intent.directives) + q.behaviors
        payload = {
            "id": q.id or f"intent-{n}",
            "prompt": q.prompt,
            "expected_output": q.expected,
            "kind": q.kind or ("negative" if q.negative else None),
            "expected_skill": None if q.negative else skill_name,
            "files": q.files,
            "assertions": q.assertions,
            "expected_behavior": behaviors,
            "required_credentials": q.credentials,
            "source": "eval_md",
            "note": f"from EVAL.md question {n} (line {q.line}); edit EVAL.md, not this copy",
        }
        try:
            cases.append(EvalCase.model_validate(payload))
        except ValidationError as err:
            lines = "\n    ".join(validation_lines(err, prefix=f"question {n}"))
            raise EvalsError(f"invalid values:\n    {lines}", where=f"{path}:{q.line}", fix="correct the question's sub-items") from None
    ids = {c.id for c in cases}
    for section, queries, negative in (("Should trigger", intent.trigger, False),
                                       ("Should not trigger", intent.no_trigger, True)):
        for n, query in enumerate(queries, 1):
            case_id = f"{'no-trigger' if negative else 'trigger'}-{n}"
            if case_id in ids:
                raise EvalsError(f"question id {case_id!r} is also the id of a '## {section}' query",
                                 where=path, fix="give the question another id")
            cases.append(EvalCase.model_validate({
                "id": case_id, "prompt": query, "kind": "negative" if negative else "implicit",
                "expected_skill": None if negative else skill_name,
                "expected_behavior": [] if negative else intent.directives,
                "source": "eval_md",
                "note": f"from EVAL.md '## {section}' item {n}; edit EVAL.md, not this copy",
            }))
    return cases


def find_eval_md(skill_dir: Path) -> Path | None:
    """EVAL.md at the skill's root or in ``evals/``; both is an error."""
    found = [Path(skill_dir) / rel for rel in EVAL_MD_FILES if (Path(skill_dir) / rel).is_file()]
    if len(found) > 1:
        raise EvalsError("two EVAL.md files: EVAL.md and evals/EVAL.md", where=skill_dir, fix="keep one of them")
    return found[0] if found else None


def read_intent(skill_dir: Path) -> EvalIntent:
    """EVAL.md's intent, or an empty intent when the skill has none."""
    path = find_eval_md(skill_dir)
    if path is None:
        return EvalIntent()
    return parse_eval_md(read_asset_text(path, root=Path(skill_dir).resolve()), path)
