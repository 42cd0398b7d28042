{{/*
Name of the chart, or nameOverride.
*/}}
{{- define "packetagent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release. Truncated to 63 characters (DNS label limit).
*/}}
{{- define "packetagent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Name of the all-in-one objects: the full name, shortened to leave room for the suffix.
*/}}
{{- define "packetagent.allInOne.fullname" -}}
{{- printf "%s-all-in-one" (include "packetagent.fullname" . | trunc 52 | trimSuffix "-") }}
{{- end }}

{{- define "packetagent.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object of the release.
*/}}
{{- define "packetagent.labels" -}}
helm.sh/chart: {{ include "packetagent.chart" . }}
app.kubernetes.io/name: {{ include "packetagent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: packetagent
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Selector labels of the all-in-one pods.
*/}}
{{- define "packetagent.allInOne.selectorLabels" -}}
app.kubernetes.io/name: {{ include "packetagent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: all-in-one
{{- end }}

{{- define "packetagent.allInOne.labels" -}}
{{ include "packetagent.labels" . }}
app.kubernetes.io/component: all-in-one
{{- end }}

{{- define "packetagent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "packetagent.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image reference: repository:tag, with @digest when a digest is set.
*/}}
{{- define "packetagent.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
A configuration value as an environment variable's text. Whole numbers from values files
arrive as float64 and would otherwise print in exponent notation (1e+06).
*/}}
{{- define "packetagent.envValue" -}}
{{- if kindIs "invalid" . }}
{{- else if kindIs "float64" . }}
{{- if eq (floor .) . }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/*
Port the app listens on.
*/}}
{{- define "packetagent.port" -}}
{{- include "packetagent.envValue" .Values.config.PACKETAGENT_PORT | default "8484" }}
{{- end }}

{{/*
"true" when the app serves the PacketADE door over gRPC (config.PACKETAGENT_GRPC_ENABLED, true
unless "false"), nothing otherwise.
*/}}
{{- define "packetagent.grpcEnabled" -}}
{{- if ne (include "packetagent.envValue" .Values.config.PACKETAGENT_GRPC_ENABLED) "false" }}true{{ end }}
{{- end }}

{{/*
gRPC port the app listens on.
*/}}
{{- define "packetagent.grpcPort" -}}
{{- include "packetagent.envValue" .Values.config.PACKETAGENT_GRPC_PORT | default "8485" }}
{{- end }}

{{/*
Directory where the gRPC TLS Secret is mounted, without a trailing slash.
*/}}
{{- define "packetagent.grpcTlsDir" -}}
{{- .Values.grpc.tls.mountPath | trimSuffix "/" }}
{{- end }}

{{/*
"true" when the gRPC door is enabled and serves TLS from grpc.tls.existingSecret.
*/}}
{{- define "packetagent.grpcTls" -}}
{{- if and (include "packetagent.grpcEnabled" .) .Values.grpc.tls.existingSecret }}true{{ end }}
{{- end }}

{{/*
Directory of the app's files (the first-run setup token), where the data volume is mounted.
*/}}
{{- define "packetagent.dataDir" -}}
{{- include "packetagent.envValue" .Values.config.PACKETAGENT_DATA_DIR | trimSuffix "/" }}
{{- end }}

{{/*
"true" when more than one replica may run: several replicas, or an autoscaler.
*/}}
{{- define "packetagent.multiReplica" -}}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- end }}

{{/*
Vault mode as the app reads it (its own default is development).
*/}}
{{- define "packetagent.vaultMode" -}}
{{- include "packetagent.envValue" .Values.config.PACKETAGENT_VAULT_MODE | default "development" }}
{{- end }}

{{/*
Path of the master key file inside the container: the Secret's key under masterKey.mountPath.
*/}}
{{- define "packetagent.masterKeyFile" -}}
{{- printf "%s/keys" (.Values.masterKey.mountPath | trimSuffix "/") }}
{{- end }}

{{/*
Port of the OTLP endpoint, or nothing when no endpoint is configured.
*/}}
{{- define "packetagent.otlpPort" -}}
{{- $endpoint := .Values.config.OTEL_EXPORTER_OTLP_ENDPOINT | default "" }}
{{- if $endpoint }}
{{- $url := urlParse $endpoint }}
{{- $port := regexFind ":[0-9]+$" $url.host | trimPrefix ":" }}
{{- if $port }}
{{- $port }}
{{- else if eq $url.scheme "https" }}
{{- "443" }}
{{- else }}
{{- "80" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Checks of values that the schema cannot express.
*/}}
{{- define "packetagent.validate" -}}
{{- if not .Values.database.existingSecret }}
{{- fail "database.existingSecret is required: the name of a Secret holding the Postgres connection URL" }}
{{- end }}
{{- if not (or .Values.nats.existingSecret .Values.nats.url) }}
{{- fail "nats.url or nats.existingSecret is required" }}
{{- end }}
{{- if not (or .Values.redis.existingSecret .Values.redis.url) }}
{{- fail "redis.existingSecret or redis.url is required: the app keeps sessions and login throttling in Redis" }}
{{- end }}
{{- $dataDir := include "packetagent.dataDir" . }}
{{- if not (hasPrefix "/" $dataDir) }}
{{- fail "config.PACKETAGENT_DATA_DIR must be an absolute path: the data volume is mounted there" }}
{{- end }}
{{- if eq $dataDir "/tmp" }}
{{- fail "config.PACKETAGENT_DATA_DIR must not be /tmp, which has a volume of its own (tmpVolume)" }}
{{- end }}
{{- if has (toString .Values.config.PACKETAGENT_HOST) (list "127.0.0.1" "localhost" "::1" "") }}
{{- fail "config.PACKETAGENT_HOST must not be a loopback address: the Service and the probes could not reach the app" }}
{{- end }}
{{- if include "packetagent.grpcEnabled" . }}
{{- if eq (include "packetagent.grpcPort" .) (include "packetagent.port" .) }}
{{- fail "config.PACKETAGENT_GRPC_PORT must differ from config.PACKETAGENT_PORT: gRPC and HTTP listen on ports of their own" }}
{{- end }}
{{- if has (include "packetagent.envValue" .Values.config.PACKETAGENT_GRPC_HOST) (list "127.0.0.1" "localhost" "::1") }}
{{- fail "config.PACKETAGENT_GRPC_HOST must not be a loopback address: the Service could not reach the gRPC port (leave it empty to use config.PACKETAGENT_HOST)" }}
{{- end }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not (dig "requests" "cpu" "" (.Values.resources | default dict))) }}
{{- fail "autoscaling scales on CPU utilisation and needs resources.requests.cpu" }}
{{- end }}
{{- range $name := list "PACKETAGENT_GRANT_SIGNING_KEY" "PACKETAGENT_CALLBACK_SIGNING_KEY" "PACKETAGENT_MASTER_KEY" "PACKETAGENT_MASTER_KEY_FILE" "PACKETAGENT_SETUP_TOKEN" "PACKETAGENT_DATABASE_URL" "PACKETAGENT_NATS_URL" "PACKETAGENT_REDIS_URL" "PACKETAGENT_GRPC_TLS_CERT_FILE" "PACKETAGENT_GRPC_TLS_KEY_FILE" }}
{{- if hasKey $.Values.config $name }}
{{- fail (printf "config.%s must not be set: it holds a credential or a key, or the chart sets it from a Secret (grantSigning, masterKey, setup, database, nats, redis, grpc.tls), and the ConfigMap is no place for secrets" $name) }}
{{- end }}
{{- end }}
{{- $multiReplica := include "packetagent.multiReplica" . }}
{{- if and $multiReplica (not .Values.grantSigning.existingSecret) }}
{{- fail `grantSigning.existingSecret is required with more than one replica (replicaCount > 1 or autoscaling.enabled): a credential grant signed by one replica's policy is verified by whichever replica's vault answers, so every replica needs the same seed. Create the Secret with
  kubectl create secret generic packetagent-grant-signing --from-literal=seed="$(openssl rand -base64 32)"
and set grantSigning.existingSecret=packetagent-grant-signing` }}
{{- end }}
{{- $vaultMode := include "packetagent.vaultMode" . }}
{{- if not .Values.masterKey.existingSecret }}
{{- if eq $vaultMode "production" }}
{{- fail `masterKey.existingSecret is required: in vault production mode (config.PACKETAGENT_VAULT_MODE) the app refuses to start without a master key. Create the Secret with
  kubectl create secret generic packetagent-master-key --from-literal=keys="$(openssl rand -base64 32)"
and set masterKey.existingSecret=packetagent-master-key` }}
{{- else if $multiReplica }}
{{- fail "masterKey.existingSecret is required with more than one replica: without it each pod generates a master key of its own, so the replicas could not read each other's credentials" }}
{{- end }}
{{- end }}
{{- if .Values.masterKey.existingSecret }}
{{- $mountPath := .Values.masterKey.mountPath | trimSuffix "/" }}
{{- if not (hasPrefix "/" $mountPath) }}
{{- fail "masterKey.mountPath must be an absolute path" }}
{{- end }}
{{- if or (eq $mountPath "/tmp") (eq $mountPath $dataDir) }}
{{- fail "masterKey.mountPath must differ from /tmp and config.PACKETAGENT_DATA_DIR, which have volumes of their own" }}
{{- end }}
{{- end }}
{{- if include "packetagent.grpcTls" . }}
{{- $tlsDir := include "packetagent.grpcTlsDir" . }}
{{- if not (hasPrefix "/" $tlsDir) }}
{{- fail "grpc.tls.mountPath must be an absolute path" }}
{{- end }}
{{- if or (eq $tlsDir "/tmp") (eq $tlsDir $dataDir) (and .Values.masterKey.existingSecret (eq $tlsDir (.Values.masterKey.mountPath | trimSuffix "/"))) }}
{{- fail "grpc.tls.mountPath must differ from /tmp, config.PACKETAGENT_DATA_DIR and masterKey.mountPath, which have volumes of their own" }}
{{- end }}
{{- if eq .Values.grpc.tls.certKey .Values.grpc.tls.keyKey }}
{{- fail "grpc.tls.certKey and grpc.tls.keyKey must name two different keys of the Secret" }}
{{- end }}
{{- end }}
{{- end }}
