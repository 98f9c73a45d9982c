"""Development tools for signoff: the local stack (``signoff_dev.local``) and the
``signoff`` command line (``signoff_dev.cli``).

Kept outside ``layers/signoff/`` on purpose: sam build copies the engine layer's
folder whole, so nothing here ships to Lambda, and the engine package never
imports this one (tests/unit/architecture/test_architecture.py checks it).
"""
