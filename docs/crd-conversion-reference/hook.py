# Probe webhook for docs/crd-conversion-reference.md: a CRD conversion webhook (/convert, renaming
# sshKeys <-> authorizedKeys and crew <-> sailors, partial objects included; objects labelled
# refuse=conversion fail) and admission webhooks that log what they receive (any other path;
# /mutate-alpha and /mutate-ga patch the keys in v1alpha1 and v1 spelling). Every review is
# appended to <dir>/log.jsonl.
# usage: python3 hook.py <port> <dir with tls.crt and tls.key for 127.0.0.1>
import json, ssl, sys, base64
from http.server import HTTPServer, BaseHTTPRequestHandler
from socketserver import ThreadingMixIn
D=sys.argv[2]
LOG=open(D+'/log.jsonl','a')
def conv(obj, desired):
    src=obj['apiVersion'].split('/')[1]; dst=desired.split('/')[1]
    spec=obj.get('spec',{})
    if src=='v1alpha1' and dst=='v1' and 'sshKeys' in spec: spec['authorizedKeys']=spec.pop('sshKeys')
    if src=='v1' and dst=='v1alpha1' and 'authorizedKeys' in spec: spec['sshKeys']=spec.pop('authorizedKeys')
    if src=='v1' and dst=='v2' and 'crew' in spec: spec['sailors']=spec.pop('crew')
    if src=='v2' and dst=='v1' and 'sailors' in spec: spec['crew']=spec.pop('sailors')
    obj['apiVersion']=desired
    return obj
class H(BaseHTTPRequestHandler):
    def log_message(self,*a): pass
    def do_POST(self):
        body=self.rfile.read(int(self.headers['Content-Length']))
        rev=json.loads(body); req=rev['request']; path=self.path.split('?')[0]
        if path=='/convert':
            objs=req['objects']
            LOG.write(json.dumps({'t':'convert','desired':req['desiredAPIVersion'],'from':[o['apiVersion'] for o in objs],'names':[o.get('metadata',{}).get('name') for o in objs],'objs':objs})+'\n'); LOG.flush()
            if any(((o.get('metadata') or {}).get('labels') or {}).get('refuse')=='conversion' for o in objs):
                resp={'uid':req['uid'],'result':{'status':'Failure','message':'refused by the probe'}}
            else:
                out=[conv(o,req['desiredAPIVersion']) for o in objs]
                resp={'uid':req['uid'],'result':{'status':'Success'},'convertedObjects':out}
            o=json.dumps({'apiVersion':rev['apiVersion'],'kind':'ConversionReview','response':resp}).encode()
        else:
            resp={'uid':req['uid'],'allowed':True}
            ob=req.get('object') or {}; old=req.get('oldObject') or {}
            LOG.write(json.dumps({'t':path,'op':req['operation'],'kind':req['kind'],'resource':req['resource'],'requestKind':req.get('requestKind'),'requestResource':req.get('requestResource'),'subResource':req.get('subResource'),'objApiVersion':ob.get('apiVersion'),'spec':ob.get('spec'),'oldApiVersion':old.get('apiVersion'),'oldSpec':old.get('spec'),'labels':ob.get('metadata',{}).get('labels'),'name':req.get('name')})+'\n'); LOG.flush()
            if path.startswith('/mutate-alpha'):
                p=[{'op':'add','path':'/spec/sshKeys','value':['ssh-ed25519 MUTATED']}]
                resp['patchType']='JSONPatch'; resp['patch']=base64.b64encode(json.dumps(p).encode()).decode()
            if path.startswith('/mutate-ga'):
                p=[{'op':'add','path':'/spec/authorizedKeys','value':['ssh-ed25519 MUTATEDGA']}]
                resp['patchType']='JSONPatch'; resp['patch']=base64.b64encode(json.dumps(p).encode()).decode()
            o=json.dumps({'apiVersion':rev['apiVersion'],'kind':'AdmissionReview','response':resp}).encode()
        self.send_response(200); self.send_header('Content-Type','application/json'); self.send_header('Content-Length',str(len(o))); self.end_headers(); self.wfile.write(o)
class S(ThreadingMixIn, HTTPServer): daemon_threads=True
s=S(('127.0.0.1',int(sys.argv[1])),H)
ctx=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(D+'/tls.crt',D+'/tls.key')
s.socket=ctx.wrap_socket(s.socket,server_side=True)
s.serve_forever()
