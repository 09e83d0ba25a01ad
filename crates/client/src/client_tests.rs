// Tests: see the parent module.
