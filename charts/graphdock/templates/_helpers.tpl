{{/* Names, labels and shared pod settings of the graphdock chart. */}}

{{- define "graphdock.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-graphdock, or the release name alone when it already says graphdock. */}}
{{- define "graphdock.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Component-qualified name; call with (dict "root" $ "component" "api"). */}}
{{- define "graphdock.componentName" -}}
{{- printf "%s-%s" (include "graphdock.fullname" .root | trunc 54 | trimSuffix "-") .component -}}
{{- end -}}

{{- define "graphdock.selectorLabels" -}}
app.kubernetes.io/name: {{ include "graphdock.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "graphdock.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: graphdock
{{ include "graphdock.selectorLabels" . }}
{{- end -}}

{{- define "graphdock.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The service account of a component: (dict "root" $ "component" "api" "values" .Values.api). */}}
{{- define "graphdock.serviceAccountName" -}}
{{- if .values.serviceAccount.create -}}
{{- default (include "graphdock.componentName" .) .values.serviceAccount.name -}}
{{- else -}}
{{- required (printf "%s.serviceAccount.name is required when %s.serviceAccount.create is false" .component .component) .values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "graphdock.bootstrapSecretName" -}}
{{- default (include "graphdock.componentName" (dict "root" . "component" "bootstrap")) .Values.bootstrap.existingSecret -}}
{{- end -}}

{{/* The generated RBAC rules (files/rbac.yaml, from the code's rule constants). */}}
{{- define "graphdock.rbac" -}}
{{- .Files.Get "files/rbac.yaml" -}}
{{- end -}}

{{/* Pod spec parts every component shares: (dict "root" $ "values" .Values.api). */}}
{{- define "graphdock.podScheduling" -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
