"""The functions the model's SQL may call: an allow-list per database, never a deny-list.

Anything not named here (file access, extensions, settings, sleeping, huge blobs,
dynamic SQL) is refused. Keep each list to what finance questions plausibly need.
"""

from __future__ import annotations

_COMMON = frozenset(
    {
        # aggregates
        "avg", "count", "max", "min", "sum",
        # window functions
        "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
        "lag", "lead", "first_value", "last_value", "nth_value",
        # numbers
        "abs", "round", "ceil", "ceiling", "floor", "trunc", "sign", "power", "pow",
        "sqrt", "exp", "ln", "log", "log10", "mod", "pi",
        # text
        "lower", "upper", "length", "substr", "substring", "ltrim", "rtrim", "replace",
        "coalesce", "nullif", "format",
    }
)

SQLITE_FUNCTIONS = _COMMON | frozenset(
    {
        "total", "group_concat", "string_agg",
        "ifnull", "iif", "instr", "trim", "printf", "typeof", "like", "glob", "unicode",
        "char", "log2", "likely", "unlikely", "likelihood",
        "date", "time", "datetime", "julianday", "strftime", "unixepoch",
    }
)

POSTGRES_FUNCTIONS = _COMMON | frozenset(
    {
        "string_agg", "array_agg", "bool_and", "bool_or", "every",
        "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
        "percentile_cont", "percentile_disc", "mode", "corr",
        "json_agg", "jsonb_agg", "json_build_object", "jsonb_build_object",
        "cbrt", "div", "width_bucket", "scale",
        "initcap", "char_length", "character_length", "left", "right", "btrim",
        "concat", "concat_ws", "split_part", "strpos", "position", "reverse", "starts_with",
        "translate", "overlay", "to_char", "to_number", "to_date", "to_timestamp",
        "regexp_replace", "regexp_match", "similar_to_escape", "similar_escape",
        "now", "date_trunc", "date_part", "extract", "age", "make_date", "make_interval",
        "justify_days", "justify_hours", "justify_interval", "date_bin", "timezone",
        "overlaps", "isfinite", "num_nulls", "num_nonnulls",
    }
)
