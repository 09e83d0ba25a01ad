#!/bin/bash
# scen.sh <kubeconfig> <api v1|v1beta1> <ns> <name> <kind Validating|Mutating> <url> <failurePolicy> <timeout>
KC=$1; API=$2; NS=$3; NAME=$4; KIND=$5; URL=$6; FP=$7; TO=$8
CA=$(base64 -w0 < /tmp/wh/certs-$9/ca.crt)
cat <<Y | kubectl --kubeconfig $KC apply -f - >/dev/null
apiVersion: admissionregistration.k8s.io/$API
kind: ${KIND}WebhookConfiguration
metadata: {name: $NAME}
webhooks:
  - name: $NAME.example.com
    admissionReviewVersions: ["v1", "v1beta1"]
    sideEffects: None
    failurePolicy: $FP
    timeoutSeconds: $TO
    namespaceSelector: {matchLabels: {wh-test: $NS}}
    rules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        resources: ["deployments"]
        operations: ["CREATE"]
    clientConfig:
      url: $URL
      caBundle: $CA
Y
sleep 2
