"""Which Dask schedulers the grader connects to: loopback, TLS, or explicitly allowed; else none."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.pipeline.course.course import GradingError
from autograder.pipeline.engines.dask_engine import _security, scheduler_address
from autograder.pipeline.engines.jobs_and_outcomes import DaskCluster


@pytest.mark.parametrize(
    "address",
    ["tcp://127.0.0.1:8786", "tcp://127.8.9.10:1", "tcp://[::1]:8786", "tcp://localhost:8786"],
)
def test_a_loopback_scheduler_is_accepted(address: str):
    assert scheduler_address(DaskCluster(scheduler=address)) == address


@pytest.mark.parametrize("address", ["tcp://10.1.2.3:8786", "tcp://[2001:db8::1]:8786"])
def test_a_scheduler_off_loopback_needs_tls_or_the_explicit_flag(address: str):
    with pytest.raises(GradingError, match="anyone who can reach a scheduler can run code"):
        scheduler_address(DaskCluster(scheduler=address))
    assert scheduler_address(DaskCluster(scheduler=address, allow_insecure=True)) == address
    tls = address.replace("tcp://", "tls://")
    assert scheduler_address(DaskCluster(scheduler=tls)) == tls


@pytest.mark.parametrize("address", ["10.1.2.3:8786", "http://10.1.2.3:8786", "tcp://host", "x"])
def test_an_address_that_is_not_tcp_or_tls_host_port_is_refused(address: str):
    with pytest.raises(GradingError, match="expected a scheduler address tcp://HOST:PORT"):
        scheduler_address(DaskCluster(scheduler=address))


def test_a_missing_or_unreadable_scheduler_file_says_so(tmp_path: Path):
    missing = tmp_path / "scheduler.json"
    with pytest.raises(GradingError, match="no Dask scheduler file"):
        scheduler_address(DaskCluster(scheduler_file=str(missing)))
    missing.write_text("{}")
    with pytest.raises(GradingError, match="is not a Dask scheduler file"):
        scheduler_address(DaskCluster(scheduler_file=str(missing)))


def test_tls_needs_its_files(tmp_path: Path):
    address = "tls://10.1.2.3:8786"
    with pytest.raises(GradingError, match="needs --tls-ca-file and --tls-cert"):
        _security(DaskCluster(scheduler=address), address)
    with pytest.raises(GradingError, match="no TLS file"):
        _security(
            DaskCluster(scheduler=address, tls_ca_file="/nonexistent/ca.pem", tls_cert="c.pem"),
            address,
        )
    with pytest.raises(GradingError, match="is tcp://"):
        _security(DaskCluster(tls_ca_file="ca.pem"), "tcp://127.0.0.1:8786")
