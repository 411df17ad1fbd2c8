//! Which view the window shows. Its own small store: the session moves the window to the session view
//! (a project or a past session opened), views move it anywhere.

export type View = 'start' | 'session' | 'timeline' | 'history' | 'settings';

export class NavStore {
  view = $state<View>('start');
}
