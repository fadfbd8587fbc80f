"""Workflows as data: what an llm agent's loop does on a query, as a document the harness interprets.

`schema.py` defines and checks a document (nodes, operators, roles, prompts, edges, budgets);
`builtin/` holds the built-in strategies (one_turn, react, selfdebug, reflexion and the four-role
team) written as documents; the loop's `interpreter.py` runs one on a query.
"""

from stages.evaluation.agents.llm.workflows.schema import (
    BUILTIN,
    Node,
    Workflow,
    WorkflowError,
    builtin_workflow,
    load_workflow,
)

__all__ = ["BUILTIN", "Node", "Workflow", "WorkflowError", "builtin_workflow", "load_workflow"]
