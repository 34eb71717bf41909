"""Results as pandas DataFrames. pandas is imported only here and only
when asked for, so the client itself needs nothing but requests."""

from __future__ import annotations

from typing import Any, Dict, List

from .paging import SolutionResult


def to_dataframe(result: SolutionResult, convert: bool = True) -> Any:
    """A DataFrame with one column per variable, in the result's order."""
    try:
        import pandas as pd  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError(
            "dataframe() needs pandas: pip install 'tern-client[pandas]' (or pip install pandas)"
        ) from None
    columns: Dict[str, List[Any]] = {v: [] for v in result.variables}
    for row in result:
        for name, value in row.items():
            columns[name].append(value.to_python() if convert and value is not None else value)
    frame = pd.DataFrame(columns, columns=result.variables)
    frame.attrs["tern_stats"] = result.stats
    return frame
