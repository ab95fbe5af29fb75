"""Privacy stage: the register of forgotten senders, erasure, and the checks that prove it."""
