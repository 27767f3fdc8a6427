package iceberg

import (
	"strconv"

	"github.com/eddystream/eddy/connector"
)

// restCatalogKeys are the options of a 'rest' catalog passed to the REST
// client as Iceberg's catalog properties name them: how it signs in
// (OAuth2 client credentials or a bearer token, or AWS SigV4 for catalogs
// such as S3 Tables and Glue) and which warehouse prefix it uses.
var restCatalogKeys = []connector.Option{
	{Key: "credential", Type: connector.String, Secret: true,
		Description: "With a 'rest' catalog: OAuth2 client credentials, 'client_id:client_secret', exchanged for a token at the catalog's token endpoint ('oauth2-server-uri', by default the catalog's own /v1/oauth/tokens)."},
	{Key: "token", Type: connector.String, Secret: true,
		Description: "With a 'rest' catalog: a bearer token sent with every request, instead of 'credential'."},
	{Key: "oauth2-server-uri", Type: connector.String,
		Description: "With a 'rest' catalog: the OAuth2 token endpoint, when it is not the catalog's own."},
	{Key: "scope", Type: connector.String,
		Description: "With a 'rest' catalog: the OAuth2 scope asked for with 'credential' (by default 'catalog')."},
	{Key: "rest.sigv4-enabled", Type: connector.Bool,
		Description: "With a 'rest' catalog: sign requests with AWS SigV4 (AWS S3 Tables, Glue), with the credentials of the 's3.*' options or of the environment."},
	{Key: "rest.signing-region", Type: connector.String,
		Description: "With 'rest.sigv4-enabled': the AWS region requests are signed for."},
	{Key: "rest.signing-name", Type: connector.String,
		Description: "With 'rest.sigv4-enabled': the AWS service requests are signed for ('s3tables', 'glue'; by default 'execute-api')."},
}

// restCatalogOptions returns restCatalogKeys with their keys prefixed, as
// a pipeline sink's 'catalog.properties.' keys are.
func restCatalogOptions(prefix string) []connector.Option {
	out := make([]connector.Option, len(restCatalogKeys))
	for i, opt := range restCatalogKeys {
		opt.Key = prefix + opt.Key
		out[i] = opt
	}
	return out
}

// addRESTCatalogProps copies the REST catalog options that are set, keys
// prefixed with prefix, into props under Iceberg's names.
func addRESTCatalogProps(props map[string]string, o connector.Options, prefix string) {
	for _, opt := range restCatalogKeys {
		if !o.IsSet(prefix + opt.Key) {
			continue
		}
		if opt.Type == connector.Bool {
			props[opt.Key] = strconv.FormatBool(o.Bool(prefix + opt.Key))
		} else {
			props[opt.Key] = o.String(prefix + opt.Key)
		}
	}
}
