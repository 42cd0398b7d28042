export { channelDelivery, messageActions, outboundMessage } from './channel-delivery';
// The mail server, the CA and the Slack API live with the other test servers; re-exported so channel specs find them here.
export { startSlackApi, type SlackApiCall, type SlackApiFailure, type SlackApiOptions, type SlackMessage, type TestSlackApi } from '@packetagent/testing';
export { startSmtpServer, testCertificateAuthority, type ReceivedMail, type SmtpServerOptions, type TestCertificateAuthority, type TestSmtpServer } from '@packetagent/testing';
