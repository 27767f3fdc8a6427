// Package all imports every connector and format built into eddy, so that
// they are registered in connector.Default:
//
//	import _ "github.com/eddystream/eddy/connectors/all"
//
// It holds the filesystem, datagen, nexmark, mysql-cdc, postgres-cdc, jdbc,
// iceberg, kafka, upsert-kafka, nats, mqtt, rabbitmq, redis, publish, print
// and blackhole connectors and the json, csv, raw, debezium-json,
// canal-json and maxwell-json formats.
package all

import (
	_ "github.com/eddystream/eddy/connectors/blackhole"   // "blackhole"
	_ "github.com/eddystream/eddy/connectors/datagen"     // "datagen"
	_ "github.com/eddystream/eddy/connectors/filesystem"  // "filesystem"
	_ "github.com/eddystream/eddy/connectors/iceberg"     // "iceberg"
	_ "github.com/eddystream/eddy/connectors/jdbc"        // "jdbc"
	_ "github.com/eddystream/eddy/connectors/kafka"       // "kafka", "upsert-kafka"
	_ "github.com/eddystream/eddy/connectors/mqtt"        // "mqtt"
	_ "github.com/eddystream/eddy/connectors/mysqlcdc"    // "mysql-cdc"
	_ "github.com/eddystream/eddy/connectors/nats"        // "nats"
	_ "github.com/eddystream/eddy/connectors/postgrescdc" // "postgres-cdc"
	_ "github.com/eddystream/eddy/connectors/print"       // "print"
	_ "github.com/eddystream/eddy/connectors/rabbitmq"    // "rabbitmq"
	_ "github.com/eddystream/eddy/connectors/redis"       // "redis"
	_ "github.com/eddystream/eddy/formats"                // "json", "csv", "raw", "debezium-json", "canal-json", "maxwell-json"
	_ "github.com/eddystream/eddy/nexmark"                // "nexmark"
	_ "github.com/eddystream/eddy/subscribe"              // "publish"
)
