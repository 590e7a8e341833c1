"""Glue's job parameters under `kinesis-dstream glue run`, without Spark: Glue Studio's
transform modules resolved to this library's without any download, modules a job asks
for that are not installed named at start with the pip command, and installed into the
run's own folder when asked."""

import os
import sys
import zipfile
from pathlib import Path

import pytest

from kinesis_dstream.glue.job import files as job_files
from kinesis_dstream.glue.job.script_process import run_in_process

from .test_glue_runner import glue_run

ROOT = Path(__file__).resolve().parents[2]
STUDIO = "s3://aws-glue-studio-transforms-510798373988-prod-us-east-1"
# The header Glue Studio writes into a visual job's script, then its transform module.
STUDIO_JOB = """import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from awsglue.job import Job
import {module}

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
print("TRANSFORM", {module}.ORIGIN)
"""


def test_a_glue_studio_job_gets_this_library_s_transform_module_without_a_download(
    local_aws, tmp_path, monkeypatch, capsys
):
    """Glue Studio's bucket on the local AWS holds another module of the same name: the
    job must import the library's, and fetch nothing."""
    s3 = local_aws.client("s3")
    bucket = STUDIO[len("s3://") :]
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="gs_kd_probe.py", Body=b"ORIGIN = 'downloaded'\n")
    library = tmp_path / "library"
    library.mkdir()
    (library / "gs_kd_probe.py").write_text("ORIGIN = 'library'\n")
    monkeypatch.setattr(job_files, "GLUE_STUDIO_MODULES_DIR", str(library))  # the lookup
    monkeypatch.syspath_prepend(str(library))  # where the shim's folder would be
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "gs_kd_probe", raising=False)
    for name, value in local_aws.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    script = tmp_path / "studio_job.py"
    script.write_text(STUDIO_JOB.format(module="gs_kd_probe"))
    args = ["--JOB_NAME", "studio", "--enable-glue-datacatalog", "true"]
    args += ["--extra-py-files", f"{STUDIO}/gs_kd_probe.py"]
    try:
        assert run_in_process(str(script), args) == 0
    finally:
        sys.modules.pop("gs_kd_probe", None)
    assert "TRANSFORM library" in capsys.readouterr().out
    assert "PYSPARK_SUBMIT_ARGS" not in os.environ  # nothing for Spark to ship


def test_a_glue_studio_module_the_library_lacks_fails_at_start_naming_it(tmp_path):
    script = tmp_path / "studio_job.py"
    script.write_text(STUDIO_JOB.format(module="gs_kd_not_there"))
    paths = f"{STUDIO}/gs_kd_not_there.py,s3://my-bucket/helpers.zip"
    done = glue_run(str(script), "--", "--JOB_NAME", "s", "--extra-py-files", paths)
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "kinesis-dstream: error: glue run: --extra-py-files names Glue Studio's transform "
        "modules gs_kd_not_there, which this library does not provide"
    )
    assert "TRANSFORM" not in done.stdout  # the script never ran, nothing was fetched


MODULE_JOB = """import sys
import kd_probe_module

print("MODULE", kd_probe_module.__file__)
"""


def test_a_module_the_job_asks_for_that_is_missing_fails_at_start_with_the_pip_command(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(MODULE_JOB)
    done = glue_run(
        str(script),
        "--",
        "--JOB_NAME", "m",
        "--additional-python-modules", "kd-probe-module==1.0,boto3",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "kinesis-dstream: error: glue run: --additional-python-modules asks for "
        "kd-probe-module==1.0 (not installed); Glue installs them at each run, this runner "
        f"never installs into your environment: install them with `{sys.executable} -m pip "
        "install kd-probe-module==1.0`, or run with glue run --install-modules to install "
        "them into a folder of this run's own"
    )
    assert "MODULE" not in done.stdout


def make_wheel(folder, name, version, module_text):
    """A pure-Python wheel of one module (what `pip wheel` would build)."""
    dist = f"{name}-{version}.dist-info"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        out.writestr(f"{name}.py", module_text)
        out.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        out.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        out.writestr(f"{dist}/RECORD", "")
    return wheel


@pytest.mark.parametrize("where", ["s3", "local"])
def test_install_modules_installs_a_wheel_into_the_run_s_own_folder(local_aws, tmp_path, where):
    wheel = make_wheel(tmp_path, "kd_probe_module", "1.0", "VALUE = 'installed'\n")
    if where == "s3":
        s3 = local_aws.client("s3")
        s3.create_bucket(Bucket="kd-probe-wheels")
        s3.put_object(Bucket="kd-probe-wheels", Key=f"w/{wheel.name}", Body=wheel.read_bytes())
        entry = f"s3://kd-probe-wheels/w/{wheel.name}"
    else:
        entry = str(wheel)
    script = tmp_path / "job.py"
    script.write_text(MODULE_JOB)
    done = glue_run(
        "--install-modules",
        str(script),
        "--",
        "--JOB_NAME", "m",
        "--additional-python-modules", entry,
        "--python-modules-installer-option", "--no-index",
        env=local_aws.env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    module_file = done.stdout.split("MODULE ", 1)[1].split()[0]
    assert "kinesis_dstream-glue-job-" in module_file  # the run's own folder
    assert not os.path.exists(module_file)  # removed with the run
