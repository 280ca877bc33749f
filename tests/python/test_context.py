"""Contexts: creation from text, files and TIDAL_CONFIG; configuration errors; lifetime."""
import gc
import os

import pytest
import tidal

from conftest import MiB, sim_config


def test_create_from_string_and_close():
    ctx = tidal.Context(sim_config("[sim]\ndevices = 2\n"))
    assert not ctx.closed
    assert ctx.system_info().device_count == 2
    ctx.close()
    assert ctx.closed
    ctx.close()  # a second close does nothing


def test_context_manager_closes():
    with tidal.Context(sim_config()) as ctx:
        assert ctx.system_info().runtime == "sim"
    assert ctx.closed
    with pytest.raises(tidal.InvalidArgumentError, match="closed"):
        ctx.alloc(16)


def test_create_from_file_and_pathlike(tmp_path):
    path = tmp_path / "tidal.toml"
    path.write_text(sim_config("[sim]\ndevices = 3\n"))
    for config in (path, str(path)):
        with tidal.Context(config) as ctx:
            assert ctx.system_info().device_count == 3
    with tidal.Context.from_file(path) as ctx:
        assert ctx.system_info().device_count == 3


def test_explicit_from_string():
    with tidal.Context.from_string(sim_config("[sim]\ndevices = 4\n")) as ctx:
        assert ctx.system_info().device_count == 4


def test_default_context_reads_tidal_config(tmp_path, monkeypatch):
    path = tmp_path / "env.toml"
    path.write_text(sim_config("[sim]\ndevices = 5\n"))
    monkeypatch.setenv("TIDAL_CONFIG", str(path))
    with tidal.Context() as ctx:
        assert ctx.system_info().device_count == 5


def test_syntax_error_names_string_line_and_column():
    with pytest.raises(tidal.ConfigError) as info:
        tidal.Context(sim_config("\n[sim]\ndevices = = 2\n"))
    e = info.value
    assert e.status == tidal.Status.ERROR_CONFIG == 6
    assert e.status_name == "TIDAL_ERROR_CONFIG"
    assert "<string>:4:" in e.message
    assert str(e).startswith("TIDAL_ERROR_CONFIG: ")


def test_syntax_error_in_file_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text(sim_config("[sim]\ncapacity = [\n"))
    with pytest.raises(tidal.ConfigError, match=r"broken\.toml:3"):
        tidal.Context(path)


def test_misspelt_key_gets_a_suggestion():
    with pytest.raises(tidal.ConfigError, match="did you mean 'runtime'"):
        tidal.Context('runtme = "sim"\n')


def test_missing_file_is_a_config_error_naming_it(tmp_path):
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(tidal.ConfigError, match="nowhere.toml"):
        tidal.Context(missing)


def test_bad_config_types():
    with pytest.raises(TypeError, match="config must be"):
        tidal.Context(42)
    with pytest.raises(tidal.InvalidArgumentError, match="NUL"):
        tidal.Context('runtime = "sim"\0')


def test_config_describe_shows_resolved_settings():
    with tidal.Context(sim_config('[pool]\ngrowth = "2MiB"\n')) as ctx:
        text = ctx.config_describe()
    assert 'runtime = "sim"' in text
    assert "growth = 2097152" in text
    assert "[sim]" in text


def test_allocations_keep_their_context_alive():
    ctx = tidal.Context(sim_config())
    a = ctx.alloc(MiB, kind="pinned")
    del ctx
    gc.collect()
    a.write(b"still here")
    assert a.read(10) == b"still here"
    a.free()


def test_close_frees_what_is_live():
    ctx = tidal.Context(sim_config())
    ctx.alloc(MiB, kind="device", tag="leaked")
    ctx.close()  # destroy reports the leak on the log and frees it; it must not fail


def test_version():
    assert tidal.version() == tidal.__version__
    major, minor, patch = (int(p) for p in tidal.version().split("."))
    assert tidal.version_number() == major * 10000 + minor * 100 + patch
    assert os.path.basename(tidal.library_path()).startswith("libtidal.so")


_RANK_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK",
                   "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK")


def test_local_rank_device_selection(monkeypatch):
    for name in _RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLURM_LOCALID", "5")
    monkeypatch.setenv("SLURM_PROCID", "9")
    with tidal.Context(sim_config('device_selection = "local-rank"\n[sim]\ndevices = 2\n')) as ctx:
        info = ctx.system_info()
        assert (info.default_device, info.local_rank, info.rank) == (1, 5, 9)
        with ctx.alloc(4096, kind=tidal.Kind.DEVICE) as a:
            assert ctx.query(a).device == 1
    with tidal.Context(sim_config("[sim]\ndevices = 2\n")) as ctx:
        assert ctx.system_info().default_device == tidal.DEVICE_DEFAULT


def test_file_name_expand(monkeypatch):
    for name in _RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert tidal.file_name_expand("s-%r-%p.json") == f"s-0-{os.getpid()}.json"
    monkeypatch.setenv("RANK", "4")
    assert tidal.file_name_expand("t%r%%") == "t4%"
    with pytest.raises(tidal.InvalidArgumentError, match="%q"):
        tidal.file_name_expand("bad%q")
