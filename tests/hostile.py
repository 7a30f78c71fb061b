"""The check the hostile-input tests (test_hostile_files.py, test_hostile_round4.py) share."""


def one_line_error(err: str) -> None:
    """``err`` is one line and no traceback: how caishen refuses bad input."""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
