"""Tools of the customer-service agent, over a small in-process sample order set."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from signoff.tools import ToolContext, tool

ORDERS: dict[str, dict[str, object]] = {
    "A-1001": {
        "id": "A-1001",
        "customer": "dana@example.com",
        "items": ["ceramic teapot"],
        "total": 42.0,
        "currency": "USD",
        "status": "delivered",
        "shipment": "SHP-77",
    },
    "A-1002": {
        "id": "A-1002",
        "customer": "lee@example.com",
        "items": ["linen apron", "tea towels"],
        "total": 58.5,
        "currency": "USD",
        "status": "in transit",
        "shipment": "SHP-78",
    },
}
SHIPMENTS: dict[str, dict[str, object]] = {
    "SHP-77": {"id": "SHP-77", "carrier": "PostNL", "status": "delivered", "eta": None},
    "SHP-78": {"id": "SHP-78", "carrier": "DHL", "status": "in transit", "eta": "2026-12-03"},
}
# Refunds issued in this process, keyed by idempotency key so a retried call is harmless.
REFUNDS: dict[str, dict[str, object]] = {}
OUTBOX: list[dict[str, object]] = []


@tool(safe=True)
def lookup_order(
    orderId: Annotated[str, Field(description="Order id, e.g. A-1001")],
) -> dict[str, object]:
    """Look up an order: items, total paid, status and shipment id."""
    order = ORDERS.get(orderId)
    if order is None:
        raise LookupError(f"no order {orderId!r}; known orders: {', '.join(ORDERS)}")
    return order


@tool(safe=True)
def get_shipment_details(shipmentId: str) -> dict[str, object]:
    """Carrier, status and expected delivery date of a shipment."""
    shipment = SHIPMENTS.get(shipmentId)
    if shipment is None:
        raise LookupError(f"no shipment {shipmentId!r}")
    return shipment


@tool(idempotent=True, editable=True, summary="Refund {amount:.2f} USD on order {orderId}")
def issue_refund(
    orderId: str,
    amount: Annotated[float, Field(gt=0, description="Amount to refund, at most the order total")],
    ctx: ToolContext,
) -> dict[str, object]:
    """Refund an order to the original payment method."""
    order = ORDERS.get(orderId)
    if order is None:
        raise LookupError(f"no order {orderId!r}")
    total = float(order["total"])  # type: ignore[arg-type]
    if amount > total:
        raise ValueError(f"refund {amount} exceeds the order total {total}")
    refund = REFUNDS.setdefault(
        ctx.idempotency_key,
        {
            "orderId": orderId,
            "amount": amount,
            "currency": order["currency"],
            "refundId": f"R-{orderId}",
        },
    )
    return refund


@tool
def send_email(to: str, subject: str, body: str) -> dict[str, object]:
    """Send an email to a customer."""
    OUTBOX.append({"to": to, "subject": subject, "body": body})
    return {"sent": True, "to": to}
