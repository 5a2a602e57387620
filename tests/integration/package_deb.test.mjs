// The Debian package (cmake/package.cmake): CPack builds it from the test's
// build tree; its files, conffile, dependencies and maintainer scripts are
// checked, lintian finds no error (and only the warnings docs/design.md
// §Network lists), the binary extracted from it runs, and its unit passes
// systemd-analyze verify.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import {tokendietBin, tempDir, SOURCE_DIR} from '../support/index.mjs';

const run = (cmd, args, opts = {}) => spawnSync(cmd, args, {encoding: 'utf8', timeout: 120_000, ...opts});

// The sanitizer build (scripts/sanitize.sh) runs the integration tests too;
// the package is the release build's, checked in that run.
const sanitized = process.env.TD_SANITIZED ? 'a package of the sanitizer build is not what users get' : false;

test('cpack -G DEB: binary, unit, conffile and docs; lintian without errors; the binary runs', {skip: sanitized}, () => {
  const buildDir = path.dirname(path.dirname(tokendietBin()));
  const {dir, cleanup} = tempDir('td-deb-');
  try {
    const r = run('cpack', ['-G', 'DEB', '-B', dir], {cwd: buildDir});
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const debs = fs.readdirSync(dir).filter(f => f.endsWith('.deb'));
    assert.equal(debs.length, 1, `packages: ${debs}`);
    assert.match(debs[0], /^tokendiet_\d+\.\d+\.\d+-1_[a-z0-9]+\.deb$/);
    const deb = path.join(dir, debs[0]);

    // The files, and nothing else (directories aside).
    const contents = run('dpkg-deb', ['--contents', deb]);
    assert.equal(contents.status, 0, contents.stderr);
    const files = contents.stdout.trim().split('\n').filter(l => !l.startsWith('d'))
      .map(l => l.split(/\s+/).slice(5).join(' ').replace(/^\./, '')).sort();
    assert.deepEqual(files, ['/etc/tokendiet/tokendiet.yaml', '/lib/systemd/system/tokendiet.service', '/usr/bin/tokendiet',
      '/usr/share/doc/tokendiet/README.md', '/usr/share/doc/tokendiet/changelog.Debian.gz',
      '/usr/share/doc/tokendiet/copyright']);
    assert.match(contents.stdout, /^-rwxr-xr-x root\/root .* \.\/usr\/bin\/tokendiet$/m);

    const control = path.join(dir, 'control');
    assert.equal(run('dpkg-deb', ['--control', deb, control]).status, 0);
    assert.equal(fs.readFileSync(path.join(control, 'conffiles'), 'utf8'), '/etc/tokendiet/tokendiet.yaml\n');
    const fields = run('dpkg-deb', ['--field', deb]).stdout;
    // Depends from dpkg-shlibdeps: the shared libraries the binary links.
    const depends = /^Depends: (.*)$/m.exec(fields)[1];
    for (const lib of ['libc6', 'libssl3', 'libsqlite3-0', 'libsystemd0', 'libyaml-cpp0.7', 'libtcmalloc-minimal4'])
      assert.match(depends, new RegExp(`(^|, )${lib.replace('.', '\\.')}( |,|$)`), `Depends: ${depends}`);
    const version = /^Version: (.*)$/m.exec(fields)[1];
    for (const script of ['postinst', 'prerm', 'postrm']) {
      const file = path.join(control, script);
      assert.ok(fs.statSync(file).mode & 0o111, `${script} is executable`);
      assert.equal(run('sh', ['-n', file]).status, 0, `${script} parses`);
    }

    // lintian: no error; each warning is one docs/design.md names.
    const lint = run('lintian', ['--no-cfg', deb]);
    const tags = (lint.stdout + lint.stderr).split('\n').filter(l => /^[EW]: /.test(l));
    assert.deepEqual(tags.filter(l => l.startsWith('E: ')), [], lint.stdout);
    const design = fs.readFileSync(path.join(SOURCE_DIR, 'docs/design.md'), 'utf8');
    for (const w of tags) assert.ok(design.includes(`\`${w.split(' ')[2]}\``), `lintian warning not in docs/design.md: ${w}`);

    const root = path.join(dir, 'root');
    assert.equal(run('dpkg-deb', ['-x', deb, root]).status, 0);
    const bin = path.join(root, 'usr/bin/tokendiet');
    const v = run(bin, ['version']);
    assert.equal(v.status, 0, v.stderr);
    assert.equal(v.stdout.trim(), `tokendiet ${version.replace(/-1$/, '')}`);
    // The conffile is the embedded default's file, and valid.
    const conf = path.join(root, 'etc/tokendiet/tokendiet.yaml');
    assert.equal(fs.readFileSync(conf, 'utf8'), fs.readFileSync(path.join(SOURCE_DIR, 'config/tokendiet.example.yaml'), 'utf8'));
    assert.equal(run(bin, ['check-config', conf]).status, 0);
    const changelog = zlib.gunzipSync(fs.readFileSync(path.join(root, 'usr/share/doc/tokendiet/changelog.Debian.gz'))).toString();
    assert.ok(changelog.startsWith(`tokendiet (${version}) `), changelog.split('\n')[0]);
    assert.match(fs.readFileSync(path.join(root, 'usr/share/doc/tokendiet/copyright'), 'utf8'),
                 /^Format: https:\/\/www\.debian\.org\/doc\/packaging-manuals\/copyright-format\/1\.0\/$/m);

    // The unit names /usr/bin; verified with that path pointing into the extracted tree.
    const unitText = fs.readFileSync(path.join(root, 'lib/systemd/system/tokendiet.service'), 'utf8');
    assert.match(unitText, /^ExecStart=\/usr\/bin\/tokendiet serve --config \/etc\/tokendiet\/tokendiet\.yaml$/m);
    assert.match(unitText, /^Documentation=file:\/usr\/share\/doc\/tokendiet\/README\.md$/m);
    assert.doesNotMatch(unitText, /\/usr\/local\//);
    if (run('systemd-analyze', ['--version']).status === 0) {
      const unit = path.join(dir, 'tokendiet.service');
      fs.writeFileSync(unit, unitText.replaceAll('/usr/bin/tokendiet', bin));
      const verify = run('systemd-analyze', ['verify', unit]);
      assert.equal(verify.status, 0, verify.stderr);
      assert.deepEqual((verify.stdout + verify.stderr).split('\n').filter(l => l.includes('tokendiet.service')), []);
    }
  } finally { cleanup(); }
});
