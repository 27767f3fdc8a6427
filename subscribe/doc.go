// Package subscribe publishes the tables of running jobs to subscribers:
// clients that receive a table's changes as they happen, each with an
// optional SQL condition over its columns, without knowing the job (space
// decoupling), without slowing it (a subscriber that falls too far behind
// is cut off, with a message saying where to resume), and, for a table
// backed by a JetStream stream, without both running at once (time
// decoupling: a subscriber resumes after the last position it received,
// even across restarts of the job).
//
// A SQL job publishes a table with the 'publish' connector:
//
//	CREATE TABLE big_orders (id BIGINT, region STRING, amount DECIMAL(12, 2))
//	WITH ('connector' = 'publish');
//	INSERT INTO big_orders SELECT id, region, amount FROM orders WHERE amount > 100;
//
// and clients subscribe over HTTP (Hub.Handler: Server-Sent Events, served
// on the job's REST address), over NATS (Hub.ServeNATS), or in the same
// process (Hub.Subscribe). Hub.Advertise lists what is published, with
// each table's columns.
package subscribe
