#!/bin/bash
# usage: run-ip.sh <kubeconfig> <ns> <port> <regapi v1|v1beta1>
set -u
KC=$1; NS=$2; PORT=$3; API=$4; CFG=image-police-$NS
K="kubectl --kubeconfig $KC"
$K create namespace $NS >/dev/null
$K label namespace $NS wh-test=$NS >/dev/null
cat <<Y | $K apply -f - >/dev/null
apiVersion: police.example.com/v1beta1
kind: WhiteList
metadata: {name: allowed-images, namespace: $NS}
spec:
  images:
    - name: nginx
      tags: ["1.27"]
Y
cat <<Y | $K apply -f - >/dev/null
apiVersion: admissionregistration.k8s.io/$API
kind: ValidatingWebhookConfiguration
metadata: {name: $CFG}
webhooks:
  - name: deployments.image-police.police.example.com
    admissionReviewVersions: ["v1", "v1beta1"]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 5
    namespaceSelector: {matchLabels: {wh-test: $NS}}
    rules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        resources: ["deployments"]
        operations: ["CREATE", "UPDATE"]
    clientConfig:
      url: https://127.0.0.1:$PORT/validate-apps-v1-deployment
Y
rm -rf /tmp/wh/certs-$NS
/work/wt-webhooks/target/debug/image-police --kubeconfig $KC --namespace $NS --own-namespace wh-own-$NS \
  --metrics-bind-address=0 --health-probe-bind-address=0 --webhook-port $PORT \
  --webhook-cert-path /tmp/wh/certs-$NS --webhook-self-signed --webhook-configuration $CFG --log-format text > /tmp/wh/ip-$NS.log 2>&1 &
echo $! > /tmp/wh/ip-$NS.pid
sleep 6
echo "--- kubectl create deployment evil --image=redis:7"
$K -n $NS create deployment evil --image=redis:7 2>&1; echo "exit=$?"
echo "--- allowed"
$K -n $NS create deployment good --image=nginx:1.27 2>&1; echo "exit=$?"
