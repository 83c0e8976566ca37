"""One JSON object per log line (``LOG_FORMAT=json``), for log shippers that read structured logs."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from operations.logcontext import FIELDS


class JsonFormatter(logging.Formatter):
    """timestamp, level, logger, message, then whichever context fields are set, and the traceback if any.

    A few lines of json.dumps rather than python-json-logger: the fields are fixed and few,
    and it keeps a dependency off every process's start-up path.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry |= {name: value for name in FIELDS if (value := getattr(record, name, ""))}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        # ensure_ascii: agent text with line breaks or control characters stays on its one line, escaped.
        return json.dumps(entry, ensure_ascii=True, default=str)
