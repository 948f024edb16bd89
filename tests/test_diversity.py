"""Diversity by task family (worldsmith/diversity.py): the figures on hand-counted inputs, and
the dataset card's table made from exported examples."""

from __future__ import annotations

from types import SimpleNamespace

from worldsmith.diversity import Diversity, chain_of, distinct_2


def test_distinct_2_counts_unique_bigrams_over_all():
    # bigrams: (a,b) (b,c) | (a,b) (b,d) -> 3 unique of 4
    assert distinct_2(["a b c", "A B d"]) == 0.75
    assert distinct_2(["one"]) == 0.0
    assert distinct_2(["x y", "x y", "x y", "x y"]) == 0.25


def test_rows_by_family_with_shapes_tools_worlds_and_near_copies():
    d = Diversity()
    d.add("lookup", "What is the status of order ord-1042?", "read", ["t1"], "w1")
    d.add("lookup", "What is the status of order ord-1042?", "read", ["t1"], "w1")  # a near (exact) copy
    d.add("lookup", "Could you list the refunds whose order id is ord-7?", "read", ["t2"], "w2")
    d.add("update", "Please cancel booking bkg-3.", "write", ["t3"], "w3")
    d.add("irrelevance", "Please delete customer cus-4.", "", [], "w3", no_call=True)  # restraint: no call at all
    d.add(
        "update", "Hi, can you set the priority of ticket tkt-9 to high and close it?", "read>write", ["t3", "t4"], "w3"
    )
    rows = {r["family"]: r for r in d.rows()}
    assert list(rows) == ["lookup", "update", "irrelevance", "all"]
    assert (rows["irrelevance"]["no_call"], rows["lookup"]["no_call"], rows["all"]["no_call"]) == (1, 0, 1)
    assert rows["lookup"]["items"] == 3 and rows["lookup"]["near_duplicate_rate"] == round(1 / 3, 3)
    assert rows["lookup"]["chain_shapes"] == 1 and rows["lookup"]["tools"] == 2 and rows["lookup"]["worlds"] == 2
    assert rows["update"]["chain_shapes"] == 2 and rows["update"]["near_duplicate_rate"] == 0.0
    assert rows["all"]["items"] == 6 and rows["all"]["tools"] == 4 and rows["all"]["chain_shapes"] == 4
    assert rows["all"]["near_duplicate_rate"] == round(1 / 6, 3)


def test_chain_of_keeps_the_calls_that_succeeded_in_order():
    calls = [
        SimpleNamespace(ok=True, read_only=True),
        SimpleNamespace(ok=False, read_only=False),
        SimpleNamespace(ok=True, read_only=False),
    ]
    assert chain_of(calls) == "read>write"
    assert chain_of([]) == ""


def test_an_exported_example_with_no_tool_call_counts_as_no_call():
    d = Diversity()
    ask = {"role": "user", "content": "Please delete customer cus-4."}
    d.add_example({"family": "irrelevance"}, [ask, {"role": "assistant", "content": "I cannot delete customers."}])
    call = {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}
    d.add_example(
        {"family": "lookup", "chain": "read"},
        [ask, {"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "assistant", "content": "Ok."}],
    )
    rows = {r["family"]: r for r in d.rows()}
    assert (rows["irrelevance"]["no_call"], rows["lookup"]["no_call"], rows["all"]["no_call"]) == (1, 0, 1)
