"""What the tests share besides fixtures: plain functions and constants, one module per kind.

Test modules import from here, never from a conftest.py or from another test module
(tests/architecture/test_tests_folder.py checks it); fixtures live in the conftest.py files.
"""
