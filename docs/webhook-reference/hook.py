import json, ssl, sys, time, base64
from http.server import HTTPServer, BaseHTTPRequestHandler
from socketserver import ThreadingMixIn
D=sys.argv[2]
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body=self.rfile.read(int(self.headers['Content-Length']))
        rev=json.loads(body); req=rev['request']; path=self.path.split('?')[0]
        resp={'uid':req['uid'],'allowed':True}
        if path=='/capture':
            open('/tmp/wh/captured-%s.json'%rev['apiVersion'].replace('/','_'),'wb').write(body)
        elif path=='/deny':
            resp={'uid':req['uid'],'allowed':False,'status':{'code':422,'reason':'Invalid','message':'custom message from the webhook'}}
        elif path=='/sleep':
            time.sleep(8)
        elif path=='/mutate':
            p=[{'op':'add','path':'/metadata/labels/mutated','value':'yes'}]
            resp['patchType']='JSONPatch'; resp['patch']=base64.b64encode(json.dumps(p).encode()).decode()
        out=json.dumps({'apiVersion':rev['apiVersion'],'kind':'AdmissionReview','response':resp}).encode()
        self.send_response(200); self.send_header('Content-Type','application/json'); self.send_header('Content-Length',str(len(out))); self.end_headers(); self.wfile.write(out)
class S(ThreadingMixIn, HTTPServer): daemon_threads=True
s=S(('127.0.0.1',int(sys.argv[1])),H)
ctx=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(D+'/tls.crt',D+'/tls.key')
s.socket=ctx.wrap_socket(s.socket,server_side=True)
s.serve_forever()
