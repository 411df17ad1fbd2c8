import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { pickBackend } from './lib/api';

const target = document.getElementById('app');
if (target !== null) {
  void pickBackend().then((backend) => mount(App, { target, props: { backend } }));
}
