"""GPU name resolution: every spelling in a sheet → one canonical GPU, with context rules.

An alias rule is ``(alias, canonical_gpu, context)``. ``context`` is a conjunction of clauses joined by
`` AND ``, evaluated on the row that carries the name:

* ``file=<file name>``, ``provider=<p>``, ``instance_type=<exact>``
* ``instance_type contains <s>``, ``instance_type matches <regex>`` (``re.search``)
* ``gpu_memory_gib<N``, ``gpu_memory_gib>=N``

Of the rules whose alias equals the name (case-insensitively) and whose clauses all hold, the one with
the most clauses wins; a tie between different GPUs is an error, never a guess. An empty context
matches anywhere. Ambiguous names such as ``A100`` deliberately have no context-free rule, so a new
provider shows up as unresolved instead of silently picking a variant.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable

import msgspec

from pricing.errors import AliasRuleError, UnresolvedGpuName

__all__ = ["AliasRule", "AliasTable", "NameContext", "normalise_alias"]


class NameContext(msgspec.Struct, frozen=True, kw_only=True):
    """What is known about the row that carries a GPU name."""

    file: str | None = None
    provider: str | None = None
    instance_type: str | None = None
    gpu_memory_gib: float | None = None


class AliasRule(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the alias table."""

    alias: str
    canonical_gpu: str
    context: str = ""
    evidence: str = ""


_Clause = Callable[[NameContext], bool]

_CLAUSE_PATTERNS: list[tuple[re.Pattern[str], Callable[[str], _Clause]]] = [
    (re.compile(r"^file=(.+)$"), lambda v: lambda c: c.file == v),
    (re.compile(r"^provider=(.+)$"), lambda v: lambda c: c.provider == v),
    (re.compile(r"^instance_type=(.+)$"), lambda v: lambda c: c.instance_type == v),
    (
        re.compile(r"^instance_type contains (.+)$"),
        lambda v: lambda c: c.instance_type is not None and v in c.instance_type,
    ),
    (
        re.compile(r"^gpu_memory_gib<([0-9.]+)$"),
        lambda v: lambda c: c.gpu_memory_gib is not None and c.gpu_memory_gib < float(v),
    ),
    (
        re.compile(r"^gpu_memory_gib>=([0-9.]+)$"),
        lambda v: lambda c: c.gpu_memory_gib is not None and c.gpu_memory_gib >= float(v),
    ),
]
_MATCHES = re.compile(r"^instance_type matches (.+)$")


def _compile_clause(text: str) -> _Clause:
    m = _MATCHES.match(text)
    if m:
        try:
            regex = re.compile(m.group(1))
        except re.error as exc:
            raise AliasRuleError(f"bad regular expression in clause {text!r}: {exc}") from exc
        return lambda c: c.instance_type is not None and regex.search(c.instance_type) is not None
    for pattern, build in _CLAUSE_PATTERNS:
        m = pattern.match(text)
        if m:
            return build(m.group(1))
    raise AliasRuleError(f"unknown context clause {text!r}")


def normalise_alias(name: str) -> str:
    """The lookup key of a name: stripped and case-folded."""
    return name.strip().casefold()


class _CompiledRule(msgspec.Struct, frozen=True):
    rule: AliasRule
    clauses: tuple[_Clause, ...]


class AliasTable:
    """Resolves GPU names to canonical GPU names with the rules of an alias table."""

    def __init__(self, rules: Iterable[AliasRule]) -> None:
        self._by_name: dict[str, list[_CompiledRule]] = defaultdict(list)
        for rule in rules:
            texts = [t.strip() for t in rule.context.split(" AND ")] if rule.context.strip() else []
            clauses = tuple(_compile_clause(t) for t in texts)
            self._by_name[normalise_alias(rule.alias)].append(_CompiledRule(rule, clauses))

    def reads_context(self, name: str) -> bool:
        """Whether any rule for ``name`` has a clause: if none has, :meth:`resolve` gives every row the
        same answer for this name, so a sheet resolves it once."""
        return any(c.clauses for c in self._by_name.get(normalise_alias(name), ()))

    def knows(self, name: str) -> bool:
        """Whether any rule (with or without context) spells this name."""
        return normalise_alias(name) in self._by_name

    def resolve(self, name: str, context: NameContext | None = None) -> str:
        """The canonical GPU name for ``name`` on a row described by ``context``.

        Raises ``UnresolvedGpuName`` when no rule applies or when the best rules disagree.
        """
        ctx = context or NameContext()
        candidates = self._by_name.get(normalise_alias(name))
        if not candidates:
            raise UnresolvedGpuName(name, "unknown GPU name (not in the alias table)")
        matching = [c for c in candidates if all(clause(ctx) for clause in c.clauses)]
        if not matching:
            raise UnresolvedGpuName(
                name, f"ambiguous name: none of its {len(candidates)} context rules matches this row"
            )
        best = max(len(c.clauses) for c in matching)
        winners = {c.rule.canonical_gpu for c in matching if len(c.clauses) == best}
        if len(winners) > 1:
            raise UnresolvedGpuName(name, f"rules tie between {', '.join(sorted(winners))}")
        return winners.pop()

    def meanings(self, name: str) -> list[str]:
        """Every canonical GPU any rule for ``name`` points at, sorted (several: the name is ambiguous
        without its context)."""
        return sorted({c.rule.canonical_gpu for c in self._by_name.get(normalise_alias(name), [])})

    def rules(self) -> list[AliasRule]:
        """Every rule, in insertion order per name."""
        return [c.rule for rules in self._by_name.values() for c in rules]
