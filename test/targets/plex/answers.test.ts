// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TargetError } from '../../../src/targets/http.ts';
import { parseSections } from '../../../src/targets/plex/api.ts';
import { activitiesAnswer, parseAnswer } from '../../../src/targets/plex/answers.ts';

// Plex's answers are parsed by schema (docs/protocols.md section 1): ids as strings or numbers, extra fields
// kept out of the way, and an answer of the wrong shape is a clear "unavailable" naming the field, retried later.
test('sections: keys as string or number, several locations, extra fields ignored', () => {
  const text = JSON.stringify({
    MediaContainer: {
      size: 2,
      Directory: [
        { key: '1', title: 'Movies', type: 'movie', agent: 'tv.plex.agents.movie', Location: [{ id: 1, path: '/data/Movies' }] },
        { key: 2, title: 'TV', type: 'show', refreshing: true, Location: [{ id: 2, path: '/data/TV' }, { id: 3, path: '/data/TV2' }] },
      ],
    },
  });
  assert.deepEqual(parseSections(text), [
    { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'], refreshing: false },
    { id: '2', title: 'TV', type: 'show', locations: ['/data/TV', '/data/TV2'], refreshing: true },
  ]);
  assert.deepEqual(parseSections(JSON.stringify({ MediaContainer: { size: 0 } })), [], 'no Directory: no sections');
});

test('a wrong shape or a page that is not JSON is "unavailable" with the field named', () => {
  const wrong = (text: string) => {
    try {
      parseSections(text);
    } catch (err) {
      assert.ok(err instanceof TargetError);
      assert.equal(err.kind, 'unavailable');
      return err.message;
    }
    assert.fail('no error');
  };
  assert.match(wrong('<html>502 Bad Gateway</html>'), /^Plex section list: answer is not JSON$/);
  assert.match(wrong(JSON.stringify({ MediaContainer: { Directory: { key: 1 } } })), /^Plex section list: unexpected answer \(MediaContainer\.Directory: /);
  assert.match(wrong(JSON.stringify({ MediaContainer: { Directory: [{ title: 'No key' }] } })), /MediaContainer\.Directory\.0\.key/);
});

test('activities: the section id of a scan comes as a string or a number', () => {
  const a = parseAnswer(
    JSON.stringify({ MediaContainer: { Activity: [{ type: 'library.update.section', Context: { librarySectionID: 3 } }, { type: 'media.generate.bif', Context: { librarySectionID: '4' } }] } }),
    activitiesAnswer,
    'activities',
  );
  assert.deepEqual(a.MediaContainer.Activity.map((x) => x.Context?.librarySectionID), ['3', '4']);
});
