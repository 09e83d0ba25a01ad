#!/bin/bash
# kcurl.sh <kubeconfig> <curl args...>: curl with the kubeconfig's credentials
KC=$1; shift
D=$(mktemp -d)
S=$(kubectl --kubeconfig $KC config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl --kubeconfig $KC config view --raw --minify -o jsonpath='{.users[0].user.client-certificate-data}' | base64 -d > $D/c 2>/dev/null
kubectl --kubeconfig $KC config view --raw --minify -o jsonpath='{.users[0].user.client-key-data}' | base64 -d > $D/k 2>/dev/null
T=$(kubectl --kubeconfig $KC config view --raw --minify -o jsonpath='{.users[0].user.token}')
A=(); [ -s $D/c ] && A+=(--cert $D/c --key $D/k); [ -n "$T" ] && A+=(-H "Authorization: Bearer $T")
curl -sk "${A[@]}" -H 'Content-Type: application/json' "$@" | sed "s#^#$S #" | sed "s#^$S ##"
rm -rf $D
