// A throwaway test CA and server certificates, made with the openssl CLI into
// a temp dir at test time (nothing secret is ever committed).
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function openssl(args, cwd) {
  execFileSync('openssl', args, {cwd, stdio: ['ignore', 'pipe', 'pipe']});
}

// Creates ca.pem/ca.key in dir and returns a function that issues a server
// certificate for the given DNS names / IP addresses, signed by that CA.
export function makeTestCA(dir, name = 'tokendiet test CA') {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
    '-keyout', 'ca.key', '-out', 'ca.pem',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  const ca = {dir, cert: path.join(dir, 'ca.pem'), key: path.join(dir, 'ca.key')};
  ca.issue = (label, {dns = [], ip = []} = {}) => {
    const san = [...dns.map(d => `DNS:${d}`), ...ip.map(i => `IP:${i}`)].join(',');
    fs.writeFileSync(path.join(dir, `${label}.ext`),
      `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${dns[0] || ip[0]}`,
      '-keyout', `${label}.key`, '-out', `${label}.csr`], dir);
    openssl(['x509', '-req', '-in', `${label}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
      '-days', '2', '-extfile', `${label}.ext`, '-out', `${label}.pem`], dir);
    return {cert: path.join(dir, `${label}.pem`), key: path.join(dir, `${label}.key`)};
  };
  return ca;
}
