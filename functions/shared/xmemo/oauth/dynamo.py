"""The authorization server's state in DynamoDB: one table, partition key `pk`
(`<kind>#<key>`), the item as a JSON string, and `expires_at` (epoch seconds) as the
table's TTL attribute. DynamoDB deletes expired items lazily (within days), so every
read also compares `expires_at` with the clock. `take` is one conditional DeleteItem
returning the old item: of two concurrent callers, one gets it."""

from __future__ import annotations

import json
import time
from typing import Any

TTL_ATTRIBUTE = "expires_at"


class DynamoState:
    def __init__(self, table: str, client: Any, clock=time.time):
        self.table = table
        self._client = client  # a boto3 DynamoDB client, made by the caller
        self._clock = clock

    @staticmethod
    def _key(kind: str, key: str) -> dict[str, Any]:
        return {"pk": {"S": f"{kind}#{key}"}}

    def put(self, kind: str, key: str, item: dict[str, Any], ttl: int | None) -> None:
        record = {**self._key(kind, key), "item": {"S": json.dumps(item)}}
        if ttl is not None:
            record[TTL_ATTRIBUTE] = {"N": str(int(self._clock() + ttl))}
        self._client.put_item(TableName=self.table, Item=record)

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        got = self._client.get_item(TableName=self.table, Key=self._key(kind, key), ConsistentRead=True)
        return self._live(got.get("Item"))

    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        try:
            old = self._client.delete_item(
                TableName=self.table, Key=self._key(kind, key), ReturnValues="ALL_OLD",
                ConditionExpression="attribute_exists(pk)",
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return None
        return self._live(old.get("Attributes"))

    def count(self, kind: str, key: str, ttl: int) -> int:
        now = int(self._clock())
        try:  # a live counter: add one
            got = self._client.update_item(
                TableName=self.table, Key=self._key(kind, key),
                UpdateExpression="ADD hits :one", ConditionExpression="#e > :now",
                ExpressionAttributeNames={"#e": TTL_ATTRIBUTE},
                ExpressionAttributeValues={":one": {"N": "1"}, ":now": {"N": str(now)}},
                ReturnValues="UPDATED_NEW",
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            # missing or expired: start a new window (a racing starter may reset it once)
            got = self._client.update_item(
                TableName=self.table, Key=self._key(kind, key),
                UpdateExpression="SET hits = :one, #e = :exp",
                ExpressionAttributeNames={"#e": TTL_ATTRIBUTE},
                ExpressionAttributeValues={":one": {"N": "1"}, ":exp": {"N": str(now + ttl)}},
                ReturnValues="UPDATED_NEW",
            )
        return int(got["Attributes"]["hits"]["N"])

    def _live(self, record: dict[str, Any] | None) -> dict[str, Any] | None:
        if not record or "item" not in record:
            return None
        expires = record.get(TTL_ATTRIBUTE)
        if expires is not None and float(expires["N"]) <= self._clock():
            return None
        return json.loads(record["item"]["S"])
