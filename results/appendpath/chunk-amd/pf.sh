#!/bin/bash
re='^BenchmarkAppendFetch$/^strategy=asis$/^batch=(100B|1KiB)$/^batches=(64|16)$|^BenchmarkAppendFetchProducers$/^strategy=asis$'
for i in $(seq 8); do for v in head pf; do /tmp/h8/$v.test -test.run '^$' -test.bench "$re" -test.benchtime 300ms | grep ^Bench | sed "s/^/$v /"; done; done
