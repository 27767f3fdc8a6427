// Package formats holds eddy's record formats: JSON and CSV, each as typed
// decoders and encoders for the Go API and registered by name ("json",
// "csv") with the options Flink users know, for connectors that take a
// 'format' option. Importing the package registers them in
// connector.Default.
package formats
