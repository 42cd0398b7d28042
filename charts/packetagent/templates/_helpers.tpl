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
Directory of the app's files (the first-run setup token), where the data volume is mounted.
*/}}
{{- define "packetagent.dataDir" -}}
{{- include "packetagent.envValue" .Values.config.PACKETAGENT_DATA_DIR | trimSuffix "/" }}
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
{{- if and .Values.autoscaling.enabled (not (dig "requests" "cpu" "" (.Values.resources | default dict))) }}
{{- fail "autoscaling scales on CPU utilisation and needs resources.requests.cpu" }}
{{- end }}
{{- end }}
