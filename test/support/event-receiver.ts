export * from '../../simulator/event-receiver.js';
