"""A Glue streaming job in the shape public scripts have, run unchanged under
`kinesis-dstream glue run` on the suite's local AWS: Avro with format_options compression
gzip (refused before its first batch) and AWS's enableUpdateCatalog example into an
Athena DDL Parquet table without classification (refused, and written as JSON). Every
record reads back; the partitions are in the catalog at the directories holding them."""

import io
import json
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest

from ..support.glue import create_kinesis_table, glue_run_command, s3_objects
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_glue_example import glue_job

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "scripts" / "glue_avro_catalog_job.py"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def test_a_public_script_writing_avro_and_updating_the_catalog_runs_unchanged(
    local_aws, kinesis, stream, unique_name, tmp_path
):
    catalog, s3 = local_aws.client("glue"), local_aws.client("s3")
    bucket = unique_name.lower()
    s3.create_bucket(Bucket=bucket)
    database, source = "glue_jobs", unique_name.replace("-", "_")
    target = f"{source}_out"
    create_kinesis_table(
        catalog,
        database,
        source,
        {"streamName": stream, "endpointUrl": local_aws.endpoint_url},
        {"classification": "json"},
        [("id", "bigint"), ("region", "string"), ("amount", "double")],
    )
    catalog.create_table(  # as Athena's CREATE EXTERNAL TABLE ... STORED AS PARQUET makes it
        DatabaseName=database,
        TableInput={
            "Name": target,
            "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": {
                "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "amount", "Type": "double"}],
                "Location": f"s3://{bucket}/table",
                "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "SerdeInfo": {"SerializationLibrary": PARQUET_SERDE},
            },
            "PartitionKeys": [{"Name": "region", "Type": "string"}],
        },
    )
    regions = ["eu", "us", "ap"]
    sent = [{"id": i, "region": regions[i % 3], "amount": i / 4} for i in range(150)]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]))
    job_args = {
        "JOB_NAME": "avro_job",
        "TempDir": str(tmp_path / "temp"),
        "database": database,
        "source_table": source,
        "target_table": target,
        "output_path": f"s3://{bucket}/",
    }
    command, env = glue_run_command(local_aws, SCRIPT, job_args)

    def table_rows():
        return [
            (key, row)
            for key, body in s3_objects(s3, bucket, "table/").items()
            for row in pq.read_table(io.BytesIO(body), partitioning=None).to_pylist()
        ]

    log = tmp_path / "job.log"
    with glue_job(command, env, log) as proc:
        wait_until(
            lambda: len(table_rows()) >= len(sent),
            300,
            f"{len(sent)} records in the catalog table",
            interval_s=0.5,
            failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
        )
    avro = []
    for body in s3_objects(s3, bucket, "avro/").values():
        reader = fastavro.reader(io.BytesIO(body))
        assert reader.codec == "null"  # Glue's Avro writer ignores a format_options gzip
        avro.extend(reader)
    assert sorted(avro, key=lambda r: r["id"]) == sent
    pages = catalog.get_paginator("get_partitions").paginate(
        DatabaseName=database, TableName=target
    )
    partitions = {
        p["Values"][0]: p["StorageDescriptor"]["Location"]
        for page in pages
        for p in page["Partitions"]
    }
    assert partitions == {r: f"s3://{bucket}/table/region={r}/" for r in regions}
    rows = table_rows()
    assert all(key.endswith(".parquet") for key, _ in rows)
    assert sorted(
        (partitions[key.split("/")[1].split("=", 1)[1]], row["id"], row["amount"])
        for key, row in rows
    ) == sorted((f"s3://{bucket}/table/region={s['region']}/", s["id"], s["amount"]) for s in sent)
    assert "have no effect here" in log.read_text()  # the ignored option, named


pytestmark = [pytest.mark.spark, pytest.mark.slow]
