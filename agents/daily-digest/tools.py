"""Tools of the daily-digest agent."""

from __future__ import annotations

from signoff.tools import tool

ORDERS_BY_DAY: dict[str, list[dict[str, object]]] = {
    "today": [
        {"id": "A-1001", "total": 42.0, "status": "delivered"},
        {"id": "A-1002", "total": 58.5, "status": "in transit"},
        {"id": "A-1003", "total": 19.9, "status": "processing"},
    ]
}


@tool(safe=True)
def list_orders(day: str = "today") -> dict[str, object]:
    """The orders of one day, with their count and revenue."""
    orders = ORDERS_BY_DAY.get(day, [])
    revenue = round(sum(float(o["total"]) for o in orders), 2)  # type: ignore[arg-type]
    return {"day": day, "count": len(orders), "revenue": revenue, "orders": orders}
