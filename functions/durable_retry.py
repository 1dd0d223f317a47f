"""Retry options with exponential backoff for `call_activity_with_retry`.

The Python SDK's RetryOptions only carries the first interval and the attempt count; the Durable
extension (and the offline host) also read `backoffCoefficient` and `maxRetryIntervalInMilliseconds`
from the action's JSON, so this subclass adds them to it.
"""

from __future__ import annotations

from typing import Any

from azure.durable_functions import RetryOptions


class BackoffRetryOptions(RetryOptions):  # type: ignore[misc]  # azure-functions-durable has no types: its base is Any
    def __init__(
        self,
        first_retry_interval_in_milliseconds: int,
        max_number_of_attempts: int,
        backoff_coefficient: float = 1.0,
        max_retry_interval_in_milliseconds: int | None = None,
    ) -> None:
        super().__init__(first_retry_interval_in_milliseconds, max_number_of_attempts)
        if backoff_coefficient < 1.0:
            raise ValueError("backoff_coefficient must be at least 1.0")
        self.backoff_coefficient = backoff_coefficient
        self.max_retry_interval_in_milliseconds = max_retry_interval_in_milliseconds

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(super().to_json())
        data["backoffCoefficient"] = self.backoff_coefficient
        if self.max_retry_interval_in_milliseconds is not None:
            data["maxRetryIntervalInMilliseconds"] = self.max_retry_interval_in_milliseconds
        return data
