#!/bin/bash
# Interleaved rounds: the chunk path as it is, and the probe binary (probe.diff) without producer state, and without producer state and the CRC.
re='^BenchmarkAppendFetch$/^strategy=asis$/^batch=100B$/^batches=64$|^BenchmarkLimit$/^batch=100B$'
for i in $(seq 10); do
  /tmp/h8/head.test -test.run '^$' -test.bench "$re" -test.benchtime 300ms | grep ^Bench | sed 's/^/head /'
  PROBE_NO_PSM=1 /tmp/h8/probe.test -test.run '^$' -test.bench "$re" -test.benchtime 300ms | grep ^Bench | sed 's/^/nopsm /'
  PROBE_NO_PSM=1 PROBE_NO_CRC=1 /tmp/h8/probe.test -test.run '^$' -test.bench "$re" -test.benchtime 300ms | grep ^Bench | sed 's/^/nopsm-nocrc /'
done
