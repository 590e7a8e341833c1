"""Put random words into a Kinesis stream: Spark's KinesisWordProducerASL, in Python.

Usage:
    python examples/kinesis_word_producer.py <stream-name> <endpoint-url> \\
        <records-per-sec> <words-per-record> [--rounds N] [--create-stream --shards N]
    python examples/kinesis_word_producer.py --local     # embedded AWS, then read back

The program is kinesis_dstream.demo.word_producer (also the ``kinesis-word-producer``
command); its core is a KinesisProducer:

    with KinesisProducer(stream_name, endpoint_url=endpoint_url) as producer:
        producer.put("spark you are my father", "partitionKey-0")
"""

import sys

from kinesis_dstream.demo.word_producer import main

if __name__ == "__main__":
    sys.exit(main())
