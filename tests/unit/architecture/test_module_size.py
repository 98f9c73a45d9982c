"""The layer's modules stay of a size one reads whole: none over 500 lines, no function
radon grades D or worse (cyclomatic complexity over 20).

Past those, split along the seams the code shows (STYLE.md, "Modules of one concept").
Each check has a guard that feeds it what it must refuse, so it cannot pass by
checking nothing.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit  # type: ignore[import-untyped]
from radon.visitors import Function  # type: ignore[import-untyped]

LAYER = Path(__file__).resolve().parents[3] / "layers" / "signoff" / "signoff"
MAX_LINES = 500
# radon's grades: A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F over 40.
WORST_GRADE = "C"


def _modules() -> list[Path]:
    return sorted(LAYER.rglob("*.py"))


def too_long(source: str) -> int | None:
    """The source's line count when it is over ``MAX_LINES``, else None."""
    lines = len(source.splitlines())
    return lines if lines > MAX_LINES else None


def too_complex(source: str) -> list[str]:
    """``name grade (complexity)`` of each function or method graded below ``WORST_GRADE``
    (a class's own grade, its methods' sum, is not a function's)."""
    found: list[str] = []
    for block in cc_visit(source):
        grade = cc_rank(block.complexity)
        if isinstance(block, Function) and grade > WORST_GRADE:
            found.append(f"{block.fullname} {grade} ({block.complexity})")
    return found


def test_the_layer_has_modules_to_check() -> None:
    assert len(_modules()) > 100, LAYER


def test_no_module_of_the_layer_is_over_500_lines() -> None:
    offenders = {
        path.relative_to(LAYER).as_posix(): lines
        for path in _modules()
        if (lines := too_long(path.read_text())) is not None
    }
    assert offenders == {}


def test_no_function_of_the_layer_is_graded_d_or_worse() -> None:
    offenders = {
        path.relative_to(LAYER).as_posix(): found
        for path in _modules()
        if (found := too_complex(path.read_text()))
    }
    assert offenders == {}


def test_the_size_check_sees_a_long_module() -> None:
    assert too_long("x = 1\n" * MAX_LINES) is None
    assert too_long("x = 1\n" * (MAX_LINES + 1)) == MAX_LINES + 1


def _branches(count: int) -> str:
    """A function with ``count`` ``if`` statements: complexity ``count + 1``."""
    body = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(count))
    return f"def branchy(x):\n{body}    return -1\n"


def test_the_complexity_check_sees_a_d_function() -> None:
    assert too_complex(_branches(19)) == []  # 20: C, the worst allowed
    assert too_complex(_branches(20)) == ["branchy D (21)"]
    source = "class Turn:\n" + "".join(f"    {line}\n" for line in _branches(35).splitlines())
    assert too_complex(source) == ["Turn.branchy E (36)"]
