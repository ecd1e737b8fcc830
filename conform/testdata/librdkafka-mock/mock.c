/*
 * mock.c starts librdkafka's mock cluster (rdkafka_mock.h) with one broker,
 * prints its bootstrap address (127.0.0.1:PORT) on the first line of stdout
 * and librdkafka's version on the second, and keeps it up until stdin
 * reaches end of file or the process is killed.
 * Package conform builds it with the system C compiler and -lrdkafka
 * (StartLibrdkafkaMock).
 */
#include <stdio.h>
#include <string.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

int main(void) {
        char errstr[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        /* Quiet: only errors on stderr. */
        rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
        /* The mock cluster needs an rd_kafka_t to run its thread; a producer
         * handle that never connects anywhere is enough. */
        if (rd_kafka_conf_set(conf, "bootstrap.servers", "", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "mock: %s\n", errstr);
                return 1;
        }
        rd_kafka_t *rk =
            rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "mock: rd_kafka_new: %s\n", errstr);
                return 1;
        }
        rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
        if (!mc) {
                fprintf(stderr, "mock: rd_kafka_mock_cluster_new failed\n");
                rd_kafka_destroy(rk);
                return 1;
        }
        printf("%s\n%s\n", rd_kafka_mock_cluster_bootstraps(mc),
               rd_kafka_version_str());
        fflush(stdout);
        char buf[256];
        while (fread(buf, 1, sizeof(buf), stdin) > 0) {
        }
        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(rk);
        return 0;
}
