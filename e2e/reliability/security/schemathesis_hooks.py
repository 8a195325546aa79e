"""Schemathesis hooks for the ingestion API (loaded through SCHEMATHESIS_HOOKS).

The service refuses a `ce-time` outside its plausibility window around its own clock
(INGEST_MAX_PAST_SKEW .. INGEST_MAX_FUTURE_SKEW, documented on the parameter). JSON Schema has no
way to say "within 90 days of now", so a generated date-time is replaced by the time five minutes
ago. Only values that already are RFC 3339 date-times are moved: a
deliberately invalid one (negative testing) stays invalid.
"""
import re
from datetime import datetime, timedelta, timezone

import schemathesis

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@schemathesis.hook
def before_call(context, case, **kwargs):
    """Runs before every request of every phase (coverage included, unlike the map_* hooks)."""
    value = (case.headers or {}).get("ce-time")
    if not (isinstance(value, str) and RFC3339.match(value)):
        return
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return  # shaped like a date-time but not one (e.g. month 13): stays invalid
    now = datetime.now(timezone.utc) - timedelta(minutes=5)
    case.headers["ce-time"] = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
